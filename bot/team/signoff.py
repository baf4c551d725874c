"""Sign-off of team plans: who may decide, what each decision stores and says.

A finished team plan in a chat that has approvers (`BOT_APPROVERS`, or a Slack channel's own,
set with `/trip approver @who`), on a surface that can carry a sign-off (Telegram, Slack: the
machine's `signable` fact; on the web chat and the console the plan is final), is posted with a
sign-off request that carries Approve / Reject buttons. Only an approver's press counts; Reject asks that approver why, and their next message
is the reason the plan is made again with. Each decision — who, when, why — is stored before
it is shown; the request has its own reminder and deadline, watched like a question's. A
decision's notice is of kind `decided` and replies to the card that was pressed, so a surface
can close that card (Slack and Telegram edit it: no buttons, who decided and when). A sign-off
that expires was pressed nowhere: its notice, also `decided`, names the sign-off (`closes`), and
every card of it the chat was shown closes before it (bot.team.cards: "nobody decided by ...").

The chat's actor (bot.chat.actor) decides *whether* (bot.chat.machine); this desk does the store
writes and words for each action and returns the outbox rows to deliver.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot import texts
from bot.delivery.bodies import notice_body
from bot.settings import Settings
from bot.store.base import OutboxRow, SessionRow, SignoffRow, Store
from bot.surface import ChatKey, IncomingMessage, Notice, mention
from bot.team.cards import when

_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]+)?>|(?<![\w@])@([A-Za-z0-9_]{2,32})|\b(\d{4,})\b")


def display(platform: str, ident: str, name: str = "") -> str:
    """How the chat names a person: a mention every surface renders as one (a Slack mention, a
    Telegram @handle or tg://user link: bot.surface.mention), or the id itself."""
    if not ident or ident.startswith("@"):
        return ident
    return mention(platform, ident, name)


def is_approver(msg: IncomingMessage, approvers: Sequence[str]) -> bool:
    wanted = {a.lower() for a in approvers}
    return msg.user_id.lower() in wanted or (bool(msg.handle) and msg.handle.lower() in wanted)


def named_person(text: str) -> str | None:
    """The person `/trip approver ...` names: a Slack id, a @handle, or a numeric Telegram id."""
    m = _MENTION.search(text)
    if m is None:
        return None
    return m.group(1) or (f"@{m.group(2)}" if m.group(2) else m.group(3))


@dataclass(frozen=True, slots=True)
class SignoffDesk:
    store: Store
    settings: Settings
    chat: ChatKey
    clock: Callable[[], float]

    async def approvers(self) -> list[str]:
        own = await self.store.channel_approvers(self.chat.platform, self.chat.chat_id)
        return list(dict.fromkeys([*self.settings.approvers, *own]))

    def new(self, session: SessionRow, approvers: Sequence[str]) -> SignoffRow:
        now = self.clock()
        return SignoffRow(uuid.uuid4().hex, session.id, str(self.chat), "waiting", tuple(approvers), now,
                          now + self.settings.signoff_remind_s, now + self.settings.signoff_timeout_s)

    def request(self, signoff: SignoffRow, lang: str) -> str:
        text = texts.text("signoff_request", lang, who=self._names(signoff), deadline=self._when(signoff.deadline))
        return notice_body(Notice("signoff", text, signoff_id=signoff.id))

    async def approve(self, signoff: SignoffRow, msg: IncomingMessage, inbox_id: int, lang: str,
                      extra: Sequence[tuple[str, str]] = ()) -> list[OutboxRow]:
        text = texts.text("signoff_approved", lang, who=display(self.chat.platform, msg.user_id, msg.user_name),
                          at=self._when(self.clock()))
        return await self._decide(signoff, "approved", msg.user_id, inbox_id,
                                  [("notice", _decided(text, msg)), *extra])

    async def ask_reason(self, signoff: SignoffRow, msg: IncomingMessage, inbox_id: int, lang: str) -> list[OutboxRow]:
        text = texts.text("signoff_ask_reason", lang, who=display(self.chat.platform, msg.user_id, msg.user_name))
        return await self._decide(signoff, "rejecting", msg.user_id, inbox_id, [("notice", _decided(text, msg))])

    async def expire(self, signoff: SignoffRow, inbox_id: int, lang: str) -> list[OutboxRow]:
        text = texts.text("signoff_expired", lang, deadline=self._when(signoff.deadline))
        notice = notice_body(Notice("decided", text, closes=signoff.id))  # its cards close before it is said
        return await self._decide(signoff, "expired", "", inbox_id, [("notice", notice)])

    async def remind(self, signoff: SignoffRow, inbox_id: int, lang: str) -> list[OutboxRow]:
        text = texts.text("signoff_reminder", lang, who=self._names(signoff), deadline=self._when(signoff.deadline))
        body = notice_body(Notice("signoff", text, signoff_id=signoff.id))
        ids = await self.store.signoff_reminded(signoff.id, inbox_id=inbox_id, outbox=[("notice", body)])
        return self._rows(signoff, ids or [], [("notice", body)])

    def gone(self, gone: Sequence[str], others: bool, lang: str) -> str:
        names = ", ".join(display(self.chat.platform, a) for a in gone)
        text = texts.text("approver_gone" if others else "approvers_all_gone", lang, who=names)
        return notice_body(Notice("info", text))

    def refusal(self, signoff: SignoffRow, lang: str) -> Notice:
        return Notice("refused", texts.text("signoff_refused", lang, who=self._names(signoff)))

    def status(self, signoff: SignoffRow, lang: str) -> str:
        if signoff.open:
            return texts.text("status_signoff", lang, who=self._names(signoff), deadline=self._when(signoff.deadline))
        who = display(self.chat.platform, signoff.decided_by or "") or "-"
        reason = f" ({signoff.reason})" if signoff.reason else ""
        return texts.text("status_decided", lang, status=signoff.status, who=who,
                          at=self._when(signoff.decided_at or signoff.requested_at), reason=reason)

    async def set_approver(self, msg: IncomingMessage, lang: str) -> Notice:
        words = msg.text.split()
        person = named_person(msg.text) if len(words) >= 3 and words[1].lower() == "approver" else None
        if person is None:
            return Notice("help", texts.text("approver_usage", lang))
        current = await self.approvers()
        if current and not is_approver(msg, current):
            names = ", ".join(display(self.chat.platform, a) for a in current)
            return Notice("refused", texts.text("approver_not_allowed", lang, who=names))
        await self.store.add_approver(self.chat.platform, self.chat.chat_id, person, msg.user_id)
        everyone = ", ".join(display(self.chat.platform, a) for a in await self.approvers())
        return Notice("info", texts.text("approver_added", lang, who=display(self.chat.platform, person), all=everyone))

    async def _decide(self, signoff: SignoffRow, status: str, by: str, inbox_id: int,
                      outbox: list[tuple[str, str]]) -> list[OutboxRow]:
        ids = await self.store.decide_signoff(signoff.id, status, by, inbox_id=inbox_id, outbox=outbox)
        return self._rows(signoff, ids or [], outbox)

    def _rows(self, signoff: SignoffRow, ids: Sequence[int], outbox: Sequence[tuple[str, str]]) -> list[OutboxRow]:
        now = self.clock()
        return [OutboxRow(i, signoff.session_id, str(self.chat), kind, body, now)
                for i, (kind, body) in zip(ids, outbox, strict=False)]

    def _names(self, signoff: SignoffRow) -> str:
        return ", ".join(display(self.chat.platform, a) for a in signoff.approvers)

    def _when(self, at: float) -> str:
        return when(at, self.settings.timezone)


def _decided(text: str, press: IncomingMessage) -> str:
    """A decision's notice, replying to the card pressed (its platform message)."""
    return notice_body(Notice("decided", text, reply_to=press.reply_to))
