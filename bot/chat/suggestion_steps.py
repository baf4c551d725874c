"""Who said what, as the chat's actor reads it and acts on it.

Before deciding (bot.chat.machine), the actor asks `read` for the facts about the sender: may
they make the change their message asks for (`entitled`, bot.chat.rights), and, for a Yes / No
press, which suggestion it is about and whether that one still waits (`current`). After, the
suggestion transitions (SUGGEST, ADOPT, DECLINE, REFUSE_CHOICE) are carried out by `apply`, with
bot.chat.suggestions' desk doing the writes and the words.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from agent_core.schema import Message
from bot import texts
from bot.chat.actor_deps import ActorDeps
from bot.chat.addressing import refused
from bot.chat.machine import Action, Transition, Trigger
from bot.chat.reach import reach_of
from bot.chat.rights import Rights, Standing, may_decide, rights_of
from bot.chat.suggestions import SuggestionDesk
from bot.chat.triggers import RowTrigger
from bot.store.base import OutboxRow, QuestionRow, SessionRow, SignoffRow, SuggestionRow
from bot.surface import MENTION, ChatKey, IncomingMessage, Notice, mention

ACTIONS = frozenset({Action.SUGGEST, Action.ADOPT, Action.DECLINE, Action.REFUSE_CHOICE})


@dataclass(frozen=True, slots=True)
class Said:
    """What the actor knows about who said a message, before it decides."""

    entitled: bool = True
    rights: Rights | None = None
    suggestion: SuggestionRow | None = None  # a Yes / No press: the suggestion it names
    current: bool = False  # ... and it still waits, in the open conversation


@dataclass(frozen=True, slots=True)
class SuggestionStep:
    queued: list[OutboxRow] = field(default_factory=list)
    notice: Notice | None = None
    woken: bool = False  # a Yes wrote the suggestion to the inbox: the chat reads it next


class SuggestionSteps:
    def __init__(self, deps: ActorDeps, key: ChatKey) -> None:
        self.d = deps
        self.key = key
        self.desk = SuggestionDesk(deps.store, key, deps.clock)

    async def read(self, trig: RowTrigger, session: SessionRow | None, signoff: SignoffRow | None,
                   history: Callable[[], Awaitable[list[Message]]]) -> Said:
        """`signoff`: the conversation's last sign-off when the caller read it (else read here, when
        needed); `history`: the conversation's messages, read only when needed."""
        msg = trig.msg
        if msg is None or session is None:
            return Said()
        if trig.trigger in (Trigger.ACCEPT, Trigger.DECLINE):
            suggestion = await self.d.store.get_suggestion(msg.question_id or "")
            current = (suggestion is not None and suggestion.status == "waiting"
                       and suggestion.session_id == session.id)
            decider = msg.user_id == session.asker_id or may_decide(msg, session, signoff or await self._signoff())
            return Said(entitled=decider, suggestion=suggestion, current=current)
        if trig.trigger is not Trigger.MESSAGE or not msg.is_group:
            return Said()
        if msg.adopted_by or msg.user_id == session.asker_id:  # no reads: the common case stays cheap
            return Said(rights=Rights(Standing.ADOPTED if msg.adopted_by else Standing.REQUESTER, reach_of(msg.text)))
        rights = rights_of(msg, session, signoff or await self._signoff(), await history())
        return Said(entitled=rights.entitled, rights=rights)

    async def apply(self, t: Transition, trig: RowTrigger, session: SessionRow | None, said: Said,
                    waiting: Sequence[QuestionRow], lang: str) -> SuggestionStep:
        row, msg = trig.row, trig.msg
        assert msg is not None and session is not None
        if t.action is Action.SUGGEST:
            assert said.rights is not None
            other = refused(msg, waiting)  # a question for someone else it tried to answer
            return SuggestionStep(await self.desk.keep(row, msg, session, said.rights, lang, other))
        assert said.suggestion is not None
        if t.action is Action.REFUSE_CHOICE:
            await self.d.store.finish_inbox(row.id)
            return SuggestionStep(notice=self.desk.refusal(said.suggestion, session, lang))
        if t.action is Action.ADOPT:
            queued = await self.desk.adopt(said.suggestion, msg, row, lang)
            return SuggestionStep(queued or [], woken=queued is not None)
        queued = await self.desk.decline(said.suggestion, msg, row, lang)
        return SuggestionStep(queued or [])

    async def absent(self, msg: IncomingMessage) -> Notice | None:
        """A message naming people who are not in the chat (where the surface can tell: a Slack
        channel): they cannot see the thread nor answer its questions, and the sender is told."""
        named = list(dict.fromkeys(m.group("id") for m in MENTION.finditer(msg.text)))
        if not named or not msg.is_group:
            return None
        members = await self.d.members(self.key)
        if members is None:
            return None
        gone = [who for who in named if who not in members]
        if not gone:
            return None
        who = ", ".join(mention(self.key.platform, g) for g in gone)
        lang = texts.detect_lang(msg.text, msg.lang or "zh")
        return Notice("info", texts.text("not_in_channel", lang, who=who))

    async def _signoff(self) -> SignoffRow | None:
        return await self.d.store.signoff_for_chat(str(self.key))
