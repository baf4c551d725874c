"""A sign-off's cards: the messages that carry its Approve / Reject buttons (the request, and each
reminder), and the one line a card shows once the sign-off is over.

A decision closes the card pressed (its notice replies to it). A sign-off that expires was
pressed nowhere, so its notice names the sign-off instead (`Notice.closes`) and the delivery
worker finds the cards the chat was shown: the session's delivered notices that carry that
sign-off, each with the platform message id its delivery recorded (Store.sent_outbox). The
chat's rows are delivered in order, so by the time the expiry's notice is, every request and
reminder before it has either reached the chat (with its id) or failed (and shows nothing).

The closed card's line is one function for every surface: each passes its own words (Telegram's
and Slack's differ in how they name the approver, a mention as each renders it).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.delivery.bodies import notice_from_body
from bot.store.base import SignoffRow, Store

DECIDED = ("approved", "rejecting", "rejected")  # rejecting: Reject pressed, its reason awaited


async def signoff_cards(store: Store, session_id: str, signoff_id: str) -> tuple[str, ...]:
    """The platform message ids of the sign-off's cards the chat was shown, oldest first. A card
    is a notice row's one message (its buttons are on its last part, whose id the row keeps)."""
    return tuple(row.message_id for row in await store.sent_outbox(session_id)
                 if row.kind == "notice" and row.message_id and notice_from_body(row.body).signoff_id == signoff_id)


def when(at: float, timezone: str) -> str:
    """A sign-off's time as the chat reads it."""
    return datetime.fromtimestamp(at, ZoneInfo(timezone)).strftime("%Y-%m-%d %H:%M")


def card_line(signoff: SignoffRow | None, timezone: str, say: Callable[..., str], who: Callable[[str], str]) -> str:
    """What a sign-off's card says once it is over: who decided and when, or that nobody did by
    its deadline; "closed" when the card's sign-off is not the one given (a newer one by now) or
    ended otherwise (cancelled, superseded). `say(key, **values)` is the surface's text for
    `signoff_approved`, `signoff_rejected`, `signoff_expired` or `signoff_closed` in the chat's
    language; `who(user_id)` names the approver as the surface renders a person."""
    if signoff is not None and signoff.status == "expired":
        return say("signoff_expired", at=when(signoff.deadline, timezone))
    if signoff is None or signoff.status not in DECIDED or not signoff.decided_by:
        return say("signoff_closed")
    key = "signoff_approved" if signoff.status == "approved" else "signoff_rejected"
    return say(key, who=who(signoff.decided_by), at=when(signoff.decided_at or signoff.requested_at, timezone))
