"""The sign-off transitions of a chat (bot.chat.machine), as its actor carries them out.

bot.team.signoff's desk holds the writes and words of each decision; this module picks the desk's
call for a transition, and gathers what a team plan needs around it: the approvers still in the
chat, and the plan's files, which go with the plan (or with its approval).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_core.schema import Message, Origin
from bot import texts
from bot.chat.actor_deps import ActorDeps
from bot.chat.machine import Action, Transition
from bot.chat.triggers import RowTrigger
from bot.delivery.plan_files import file_body, plan_files
from bot.run.records import history_from_messages
from bot.store.base import OutboxRow, SessionRow, SignoffRow, TurnStart
from bot.surface import ChatKey, Notice
from bot.team.signoff import SignoffDesk, display
from tools.plan import TripPlan

ACTIONS = frozenset({Action.APPROVE, Action.ASK_REASON, Action.REPLAN, Action.REFUSE_DECISION,
                     Action.REMIND_SIGNOFF, Action.EXPIRE_SIGNOFF})


@dataclass(frozen=True, slots=True)
class SignoffStep:
    """What the actor does next: deliver `queued`, say `notice`, run the `replan` session."""

    queued: list[OutboxRow] = field(default_factory=list)
    notice: Notice | None = None
    replan: SessionRow | None = None


class SignoffSteps:
    def __init__(self, deps: ActorDeps, key: ChatKey) -> None:
        self.d = deps
        self.key = key
        self.desk = SignoffDesk(deps.store, deps.settings, key, deps.clock)

    async def apply(self, t: Transition, trig: RowTrigger, session: SessionRow, signoff: SignoffRow) -> SignoffStep:
        row, msg, lang, desk = trig.row, trig.msg, session.lang, self.desk
        if t.action is Action.APPROVE:  # the approved plan is the final one: its files go with the decision
            assert msg is not None
            plans = [e.plan for e in history_from_messages(await self.d.store.load_messages(session.id)) if e.plan]
            files = self.files(plans[-1], lang) if plans else ()
            return SignoffStep(await desk.approve(signoff, msg, row.id, lang, files))
        if t.action is Action.ASK_REASON:
            assert msg is not None
            return SignoffStep(await desk.ask_reason(signoff, msg, row.id, lang))
        if t.action is Action.REFUSE_DECISION:
            await self.d.store.finish_inbox(row.id)
            return SignoffStep(notice=desk.refusal(signoff, lang))
        if t.action is Action.REMIND_SIGNOFF:
            return SignoffStep(await desk.remind(signoff, row.id, lang))
        if t.action is Action.EXPIRE_SIGNOFF:
            return SignoffStep(await desk.expire(signoff, row.id, lang))
        # REPLAN: the rejection is stored with the turn that plans again
        assert msg is not None
        who = display(self.key.platform, msg.user_id)
        turn = TurnStart(
            chat_key=str(self.key), inbox_id=row.id, lang=session.lang, asker_id=session.asker_id,
            message=Message.user(texts.REJECTED.format(who=who, reason=msg.text.strip()), origin=Origin.SIGNOFF),
            asker_name=session.asker_name, request=session.request, location=None,
            rejected_by=msg.user_id, reason=msg.text.strip()[:500],
        )
        return SignoffStep(replan=await self.d.store.start_turn(turn))

    async def present_approvers(self) -> tuple[list[str], list[str]]:
        """The approvers still in the chat, and those who left it (when the surface can tell)."""
        approvers = await self.desk.approvers()
        members = await self.d.members(self.key) if approvers else None
        if members is None:
            return approvers, []
        gone = [a for a in approvers if not a.startswith("@") and a not in members]
        return [a for a in approvers if a not in gone], gone

    def files(self, plan: TripPlan, lang: str) -> list[tuple[str, str]]:
        """The calendar and the cost sheet of a plan, as outbox rows."""
        return [("file", file_body(f, lang)) for f in plan_files(plan, self.d.settings.timezone, lang)]
