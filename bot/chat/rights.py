"""Who may change what, in a conversation with several people (a group, a Slack channel thread).

The chat machine's `entitled` fact (bot.chat.machine) is read here:

| who says it                                   | may change                                     |
|-----------------------------------------------|------------------------------------------------|
| the only person (a private chat, the web)     | anything                                       |
| the person who asked for the trip             | anything: destination, dates, budget, legs     |
| an approver, once they rejected the plan      | anything, like the requester                   |
| anyone, with the requester's Yes              | what their suggestion asked                    |
| a traveller the request names                 | their own legs: home city, seat, times         |
| anyone else (a bystander, a newcomer)         | nothing: their message is kept as a suggestion |

A message that changes nothing (thanks, ok, an emoji) is taken from anyone. What a message would
change is read by bot.chat.reach. A suggestion is decided (Yes / No) by the requester, or by an
approver after a Reject.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from agent_core.party import Traveller, read_party
from agent_core.schema import Message, Role
from bot.chat.reach import Reach, reach_of
from bot.store.base import SessionRow, SignoffRow
from bot.surface import IncomingMessage
from bot.team.signoff import is_approver


class Standing(StrEnum):
    ALONE = "alone"  # a private chat, or a conversation not yet open: it is theirs
    REQUESTER = "requester"  # asked for the trip
    APPROVER = "approver"  # an approver who rejected the plan: they reshape it with the requester
    ADOPTED = "adopted"  # a suggestion the requester accepted
    TRAVELLER = "traveller"  # named in the request (a Slack mention, a Telegram @username)
    BYSTANDER = "bystander"  # has spoken in this conversation, is not on the trip
    NEWCOMER = "newcomer"  # has not spoken in this conversation yet, is not on the trip


@dataclass(frozen=True, slots=True)
class Rights:
    standing: Standing
    reach: Reach

    @property
    def entitled(self) -> bool:
        if self.standing in (Standing.ALONE, Standing.REQUESTER, Standing.APPROVER, Standing.ADOPTED):
            return True
        if self.reach is Reach.NOTHING:
            return True
        return self.standing is Standing.TRAVELLER and self.reach is Reach.OWN


def rights_of(msg: IncomingMessage, session: SessionRow | None, signoff: SignoffRow | None,
              history: Sequence[Message] = ()) -> Rights:
    """The standing of the message's sender in the chat's open conversation, and what it reaches.
    `history`: the conversation's messages (who has spoken, the request's party)."""
    reach = reach_of(msg.text)
    if session is None or not msg.is_group:
        return Rights(Standing.ALONE, reach)
    if msg.adopted_by:
        return Rights(Standing.ADOPTED, reach)
    if msg.user_id == session.asker_id:
        return Rights(Standing.REQUESTER, reach)
    if rejected_by_approver(msg, signoff):
        return Rights(Standing.APPROVER, reach)
    if any(_is(msg, t) for t in party_of(session, history)):
        return Rights(Standing.TRAVELLER, reach)
    spoke = any(m.sender is not None and m.sender.user_id == msg.user_id for m in history)
    return Rights(Standing.BYSTANDER if spoke else Standing.NEWCOMER, reach)


def may_decide(msg: IncomingMessage, session: SessionRow | None, signoff: SignoffRow | None) -> bool:
    """May the person pressing Yes / No on a suggestion decide it: the requester, or an approver
    after a Reject (a press in a private chat is no exception: suggestions come from groups)."""
    if session is None:
        return False
    return msg.user_id == session.asker_id or rejected_by_approver(msg, signoff)


def rejected_by_approver(msg: IncomingMessage, signoff: SignoffRow | None) -> bool:
    """Is the sender an approver of the conversation's last sign-off, which was rejected?"""
    return (signoff is not None and signoff.status in ("rejecting", "rejected")
            and is_approver(msg, signoff.approvers))


def party_of(session: SessionRow, history: Sequence[Message]) -> list[Traveller]:
    """The travellers of the conversation's trip: from the request of its current run, else from
    the first request in it that names any (a follow-up like "make it cheaper" names nobody)."""
    party = read_party(session.request)
    if party:
        return party
    for m in history:
        if m.role is Role.USER and m.is_persons_words and m.content and (found := read_party(m.content)):
            return found
    return []


def _is(msg: IncomingMessage, traveller: Traveller) -> bool:
    if traveller.user_id:
        return traveller.user_id == msg.user_id
    return bool(traveller.handle) and traveller.handle == msg.handle.lower()
