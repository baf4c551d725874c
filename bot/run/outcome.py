"""What a run's end writes: the pause with its questions, the finished run with its answer (a
team plan's files or its sign-off request beside it; where the surface cannot carry a sign-off,
the files and a note saying so), the notice of a failed or crashed run.

Each is one store transaction with its outbox rows; a pause and a finished run store the
segment's token usage in it too, the other outcomes queue it beside theirs. The chat's actor
(bot.chat.actor) applies outcomes one at a time, in its own task, and delivers the rows returned.
`interrupt` also ends a run the person stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agent_core.memory import Memory
from agent_core.schema import Message
from bot import texts
from bot.chat.actor_deps import ActorDeps
from bot.chat.addressing import addressee_for
from bot.chat.machine import Action, ChatState, Facts, Transition, Trigger, decide
from bot.delivery.bodies import Audience, answer_body, notice_body, question_body
from bot.run.segment import Crashed, Failed, Finished, Paused, RunOutcome
from bot.store.base import OutboxRow, QuestionRow, SessionRow
from bot.surface import ChatKey, Notice, run_ref
from bot.team.signoff_steps import SignoffSteps

_TRIGGER: dict[type, Trigger] = {
    Paused: Trigger.PAUSED, Finished: Trigger.FINISHED, Failed: Trigger.FAILED, Crashed: Trigger.CRASHED,
}


class RunEnds:
    def __init__(self, deps: ActorDeps, key: ChatKey, signoffs: SignoffSteps) -> None:
        self.d = deps
        self.key = key
        self.skey = str(key)
        self.signoffs = signoffs

    async def write(self, session: SessionRow, outcome: RunOutcome) -> tuple[Transition, list[OutboxRow]]:
        """Store the outcome; the transition taken and the outbox rows to deliver."""
        team = _is_team_plan(outcome)
        approvers, gone = await self.signoffs.present_approvers() if team else ([], [])
        # A live run's chat is working: every transition out of `working` (cancel, new, stop)
        # stops the run and drops its outcome first, and only the chat's task writes the chat.
        facts = Facts(idle_run=True, signoff=bool(approvers), signable=self.d.signs_off(self.key))
        t = decide(ChatState.WORKING, _TRIGGER[type(outcome)], facts)
        if isinstance(outcome, Paused | Finished):  # its usage goes in the same transaction
            self.d.driver.count_usage(outcome.usage, self.key.platform)
            if isinstance(outcome, Paused):
                return t, await self._pause(session, outcome)
            return t, await self._finish(session, outcome, t, approvers, gone)
        usage = self.d.driver.save_usage(outcome.usage, self.key.platform)
        lang = session.lang
        if isinstance(outcome, Failed):
            notice = Notice("error", texts.error_text(outcome.failure.reason, lang))
            body = notice_body(notice, ends_run=True, lang=lang, reason=outcome.failure.reason)
            await asyncio.gather(
                self.d.store.finish_run(session.id, outcome.messages, outbox=[("notice", body)],
                                        inbox_done=outcome.inbox_done),
                usage,
            )
            self.d.metrics.runs.labels(outcome.failure.reason).inc()
            return t, []
        notice = Notice("error", texts.error_text("internal", lang))
        await asyncio.gather(
            self.interrupt(session, f"Error: internal failure ({outcome.error})", close=False,
                           notice=notice_body(notice, ends_run=True, lang=lang, reason="internal")),
            usage,
        )
        self.d.metrics.runs.labels("internal").inc()
        return t, []

    async def _pause(self, session: SessionRow, outcome: Paused) -> list[OutboxRow]:
        questions = self._questions(session, outcome)
        # each question's posting mentions the person asked: by id when known, else by the
        # handle the request used
        postings = [question_body(q.tool_call_id, q.question, q.options,
                                  Audience(session.lang, q.asker_id, q.addressee or session.asker_name))
                    for q in questions]
        row_ids = await self.d.store.pause(session.id, outcome.messages, questions, postings=postings,
                                           step=outcome.step, inbox_done=outcome.inbox_done, usage=outcome.usage)
        queued = [OutboxRow(row_id, session.id, self.skey, "question", body, self.d.clock(), tool_call_id=q.tool_call_id)
                  for row_id, q, body in zip(row_ids, questions, postings, strict=True)]
        self.d.question_stored(min(min(q.deadline, q.remind_at or q.deadline) for q in questions))
        return queued

    async def _finish(self, session: SessionRow, outcome: Finished, t: Transition, approvers: list[str],
                      gone: list[str]) -> list[OutboxRow]:
        lang, desk = session.lang, self.signoffs.desk
        audience = Audience(lang, session.asker_id, session.asker_name, run_ref(session.id, session.run_no))
        outbox = [("answer", answer_body(outcome.answer, outcome.verdict, audience, outcome.steps))]
        if gone:  # an approver who left the channel cannot see the request: said, and not asked
            outbox.append(("notice", desk.gone(gone, bool(approvers), lang)))
        signoff = desk.new(session, approvers) if t.action is Action.STORE_FOR_SIGNOFF else None
        if _is_team_plan(outcome) and signoff is None:  # a team's final plan comes with its files
            assert outcome.answer.plan is not None
            outbox += self.signoffs.files(outcome.answer.plan, lang)
        if signoff is not None:  # the plan, then the request with the approvers' buttons
            outbox.append(("notice", desk.request(signoff, lang)))
        if t.action is Action.STORE_UNSIGNED:  # approvers, but nobody can sign here: final, and why
            outbox.append(("notice", notice_body(Notice("info", texts.text("signoff_elsewhere", lang)))))
        row_ids = await self.d.store.finish_run(session.id, outcome.messages, outbox=outbox,
                                                inbox_done=outcome.inbox_done, signoff=signoff, usage=outcome.usage)
        if signoff is not None:  # its reminder and deadline are watched like a question's
            self.d.question_stored(min(signoff.remind_at, signoff.deadline))
        self.d.metrics.runs.labels("answered").inc()
        return [OutboxRow(i, session.id, self.skey, kind, b, self.d.clock())
                for i, (kind, b) in zip(row_ids, outbox, strict=True)]

    def _questions(self, session: SessionRow, paused: Paused) -> list[QuestionRow]:
        now = self.d.clock()
        timeout, remind = self.d.settings.human_timeout_s, self.d.settings.remind_after_s
        questions = []
        for ask in paused.asks:
            may_answer, addressee = addressee_for(ask.to, session.request, session.asker_id)
            questions.append(QuestionRow(
                session.id, ask.tool_call_id, ask.question, ask.options, may_answer, now, now + timeout, None,
                "waiting", remind_at=now + remind if 0 < remind < timeout else None, addressee=addressee,
            ))
        return questions

    async def interrupt(self, session: SessionRow, result: str, *, close: bool, notice: str | None,
                        kept: Sequence[Message] = (), after: Sequence[Message] = ()) -> None:
        """End the session's run: every call still open gets its result where the run made one
        (`kept`, not yet stored) and `result` otherwise, so the history stays valid for the API;
        `after` follows them; its question (if any) is cancelled — with its notice, in one write."""
        open_calls = Memory(await self.d.store.load_messages(session.id)).unanswered_calls()
        made = {m.tool_call_id: m for m in kept}
        fillers = [made.get(tc.id) or Message.tool(result, tool_call_id=tc.id, name=tc.function.name)
                   for tc in open_calls]
        await self.d.store.interrupt(session.id, [*fillers, *after], close=close, notice=notice)


def _is_team_plan(outcome: RunOutcome) -> bool:
    return isinstance(outcome, Finished) and outcome.answer.plan is not None and bool(outcome.answer.plan.party)
