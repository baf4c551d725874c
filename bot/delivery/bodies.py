"""What the runtime hands to surfaces: best-effort progress, and the outbox rows' bodies.

Progress (steps, tool calls) is best effort and goes straight to the surface. Everything that
must arrive is an outbox row (bot.delivery.outbox delivers it); its body is JSON, written here and read
back by the delivery worker, so a row queued before a restart is delivered after it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from agent_core.events import AnswerReady, Event, QuestionAsked, StepStarted, ToolFinished, Verdict
from bot.observe.metrics import Metrics
from bot.surface import ChatKey, Notice, RunInfo, Surface
from tools.plan import TripPlan

log = logging.getLogger(__name__)


class Progress:
    """Steps and tool calls, to the chat's surface; a failure never stops the run."""

    def __init__(self, *, metrics: Metrics, surfaces: dict[str, Surface],
                 owns: Callable[[str], bool] | None = None) -> None:
        self.metrics = metrics
        self.surfaces = surfaces
        self.owns = owns or _always  # bot.cluster.ownership: a process that lost the chat shows nothing

    async def show(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        if isinstance(event, StepStarted):
            self.metrics.steps.inc()
        elif isinstance(event, ToolFinished):
            self.metrics.tool_calls.labels(event.name, str(event.ok).lower()).inc()
        surface = self.surfaces.get(chat.platform)
        if surface is None or not self.owns(str(chat)):
            return
        try:
            await surface.show_progress(chat, event, run)
        except Exception:  # progress is best effort: the run goes on
            log.warning("progress update failed for %s", chat, exc_info=True)

    async def notice_now(self, chat: ChatKey, notice: Notice) -> None:
        """A notice about a message that never reached the inbox (refused, invalid): best effort."""
        surface = self.surfaces.get(chat.platform)
        if surface is None:
            return
        try:
            await surface.post_notice(chat, notice, UNRECORDED)
        except Exception:
            log.warning("notice to %s failed", chat, exc_info=True)


def _always(chat_key: str) -> bool:
    return True


class _Unrecorded:
    """The part log of a post that is not an outbox row."""

    done = 0

    async def sent(self, message_id: str, *, more: bool) -> None:
        return None


UNRECORDED = _Unrecorded()


# -- outbox bodies ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Audience:
    """Who a row is for: the language to render in and the person to mention."""

    lang: str
    user_id: str = ""
    user_name: str = ""
    run: str = ""  # the run the row ends (run_ref), on answers: a surface settles that run's progress


def answer_body(answer: AnswerReady, verdict: Verdict | None, audience: Audience, steps: int) -> str:
    return json.dumps(
        {
            "text": answer.text,
            "plan": answer.plan.model_dump() if answer.plan is not None else None,
            "verdict": None if verdict is None else {
                "label": verdict.label, "label_en": verdict.label_en, "reasons": list(verdict.reasons),
                "failed_checks": list(verdict.failed_checks), "rubric_skipped": verdict.rubric_skipped,
                "rounds": verdict.rounds, "graded": verdict.graded,
            },
            "lang": audience.lang, "user_id": audience.user_id, "user_name": audience.user_name, "steps": steps,
            "run": audience.run,
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


def question_body(tool_call_id: str, question: str, options: tuple[str, ...], audience: Audience) -> str:
    """A question's outbox body: the run's pause stores it (bot.run.outcome), the delivery worker posts it."""
    return json.dumps(
        {"tool_call_id": tool_call_id, "question": question, "options": list(options), "lang": audience.lang,
         "user_id": audience.user_id, "user_name": audience.user_name},
        ensure_ascii=False,
    )


def question_from_body(body: str) -> QuestionAsked:
    data = json.loads(body)
    return QuestionAsked(data["tool_call_id"], data["question"], tuple(data.get("options") or ()))


def notice_body(notice: Notice, *, ends_run: bool = False, steps: int = 0, reason: str = "", lang: str = "") -> str:
    data: dict[str, object] = {"kind": notice.kind, "text": notice.text, "ends_run": ends_run, "steps": steps,
                               "reason": reason, "lang": lang, "reply_to": notice.reply_to}
    if notice.signoff_id:
        data["signoff_id"] = notice.signoff_id
    if notice.suggestion_id:
        data["suggestion_id"] = notice.suggestion_id
    if notice.closes:
        data["closes"] = notice.closes
    return json.dumps(data, ensure_ascii=False)


def notice_from_body(body: str) -> Notice:
    data = json.loads(body)
    return Notice(data["kind"], data["text"], data.get("reply_to"), data.get("signoff_id"), data.get("suggestion_id"),
                  data.get("closes"))


def audience_of(body: str) -> tuple[Audience, int, bool, str]:
    """The audience of any row's body, with the steps of the run it ends (if it ends one)."""
    data = json.loads(body)
    audience = Audience(data.get("lang") or "zh", data.get("user_id") or "", data.get("user_name") or "",
                        data.get("run") or "")
    ends = bool(data.get("ends_run")) or "plan" in data
    return audience, int(data.get("steps") or 0), ends, str(data.get("reason") or "")
