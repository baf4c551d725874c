"""Delivery: everything the runtime hands to surfaces, with retries where it must arrive.

Progress is best effort. A question is posted and its message id recorded (so a retry never
posts it twice); an answer is queued in the outbox in the run's last transaction, delivered,
then marked sent, so a crash in between re-delivers it at the next start.
"""

from __future__ import annotations

import asyncio
import json
import logging

from agent_core.events import AnswerReady, Event, QuestionAsked, StepStarted, ToolFinished, Verdict
from bot.chat import ChatKey, Notice, RunInfo, Surface
from bot.metrics import Metrics
from bot.settings import Settings
from bot.store.base import OutboxRow, QuestionRow, SessionRow, Store
from tools.plan import TripPlan

log = logging.getLogger(__name__)
DELIVERY_DELAYS = (0.5, 1, 2, 4, 8, 16, 30)


class Delivery:
    def __init__(self, *, store: Store, settings: Settings, metrics: Metrics, surfaces: dict[str, Surface]) -> None:
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.surfaces = surfaces

    async def progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        if isinstance(event, StepStarted):
            self.metrics.steps.inc()
        elif isinstance(event, ToolFinished):
            self.metrics.tool_calls.labels(event.name, str(event.ok).lower()).inc()
        surface = self.surfaces.get(chat.platform)
        if surface is None:
            return
        try:
            await surface.show_progress(chat, event, run)
        except Exception:  # progress is best effort: the run goes on
            log.warning("progress update failed for %s", chat, exc_info=True)

    async def post_question(self, session: SessionRow, event: QuestionAsked, run: RunInfo) -> None:
        chat = ChatKey.parse(session.chat_key)
        surface = self.surfaces.get(chat.platform)
        if surface is None:
            log.error("no surface for %s: question stays unposted", chat)
            return
        for delay in (*DELIVERY_DELAYS, None):
            try:
                message_id = await surface.post_question(chat, event, run)
            except Exception:
                if delay is None:
                    log.exception("could not post the question in %s; it is re-posted at next start", chat)
                    return
                await asyncio.sleep(delay)
                continue
            await self.store.set_question_posted(session.id, event.tool_call_id, str(message_id))
            return

    async def repost_question(self, q: QuestionRow) -> None:
        session = await self.store.session_by_id(q.session_id)
        if session is None:
            return
        run = RunInfo(session.id, session.lang, session.asker_id, session.asker_name, self.settings.max_steps)
        await self.post_question(session, QuestionAsked(q.tool_call_id, q.question, q.options), run)

    async def deliver(
        self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo, outbox_id: int | None
    ) -> None:
        surface = self.surfaces.get(chat.platform)
        if surface is None:
            return
        for delay in (*DELIVERY_DELAYS, None):
            try:
                await surface.post_answer(chat, answer, verdict, run)
                break
            except Exception:
                if delay is None:
                    log.exception("could not deliver the answer in %s; it is retried at next start", chat)
                    return
                await asyncio.sleep(delay)
        if outbox_id is not None:
            await self.store.outbox_sent(outbox_id)

    async def deliver_outbox(self, row: OutboxRow) -> None:
        session = await self.store.session_by_id(row.session_id)
        lang = session.lang if session else "zh"
        run = RunInfo(row.session_id, lang, session.asker_id if session else "", session.asker_name if session else "")
        answer, verdict = answer_from_body(row.body)
        await self.deliver(ChatKey.parse(row.chat_key), answer, verdict, run, row.id)

    async def notice(self, chat: ChatKey, notice: Notice) -> None:
        surface = self.surfaces.get(chat.platform)
        if surface is None:
            return
        try:
            await surface.post_notice(chat, notice)
        except Exception:
            log.warning("notice to %s failed", chat, exc_info=True)


def answer_body(answer: AnswerReady, verdict: Verdict | None) -> str:
    return json.dumps(
        {
            "text": answer.text,
            "plan": answer.plan.model_dump() if answer.plan is not None else None,
            "verdict": None if verdict is None else {
                "label": verdict.label, "label_en": verdict.label_en, "reasons": list(verdict.reasons),
                "failed_checks": list(verdict.failed_checks), "rubric_skipped": verdict.rubric_skipped,
                "rounds": verdict.rounds, "graded": verdict.graded,
            },
        },
        ensure_ascii=False,
    )


def answer_from_body(body: str) -> tuple[AnswerReady, Verdict | None]:
    data = json.loads(body)
    plan = TripPlan.model_validate(data["plan"]) if data.get("plan") else None
    v = data.get("verdict")
    verdict = None if not v else Verdict(
        v["label"], v["label_en"], tuple(v["reasons"]), tuple(v["failed_checks"]), v["rubric_skipped"], v["rounds"],
        v.get("graded", True),
    )
    return AnswerReady(data["text"], plan), verdict
