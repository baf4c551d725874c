"""Agent events as web chat SSE payloads (adapters.web.payloads names each event and its data)."""

from __future__ import annotations

from pydantic import BaseModel

from adapters.web.payloads import (
    AnswerData,
    DeltaData,
    DoneData,
    ErrorData,
    StepData,
    TextResetData,
    ToolData,
    VerdictData,
)
from agent_core.events import (
    AnswerReady,
    Event,
    RunFailed,
    RunFinished,
    StepStarted,
    TextDelta,
    TextReset,
    Thought,
    ToolCalled,
    ToolFinished,
    Verdict,
)


def progress_data(event: Event, run: str = "") -> tuple[str, BaseModel] | None:
    """`run`: the run's reference, on its step events (the page's Stop names it)."""
    match event:
        case StepStarted():
            return "step", StepData(step=event.step, max_steps=event.max_steps, run=run or None)
        case TextDelta():
            return "delta", DeltaData(step=event.step, text=event.text)
        case TextReset():
            return "text_reset", TextResetData(step=event.step)
        case Thought():
            return "tool", ToolData(phase="thought", step=event.step, text=event.text)
        case ToolCalled():
            return "tool", ToolData(
                phase="call",
                step=event.step,
                name=event.name,
                tool_call_id=event.tool_call_id,
                arguments=event.arguments,
            )
        case ToolFinished():
            return "tool", ToolData(
                phase="result",
                step=event.step,
                name=event.name,
                tool_call_id=event.tool_call_id,
                ok=event.ok,
                summary=event.summary,
            )
        case RunFailed():
            return "error", ErrorData(message=event.message, reason=event.reason, retryable=event.retryable)
        case RunFinished():
            return "done", DoneData(steps=event.steps)
        case AnswerReady():
            return "answer", AnswerData(text=event.text, plan=event.plan)
        case Verdict():
            return "verdict", verdict_data(event)
    return None


def verdict_data(verdict: Verdict) -> VerdictData:
    return VerdictData(
        label=verdict.label,
        label_en=verdict.label_en,
        reasons=list(verdict.reasons),
        failed_checks=list(verdict.failed_checks),
        rubric_skipped=verdict.rubric_skipped,
        rounds=verdict.rounds,
        graded=verdict.graded,
    )
