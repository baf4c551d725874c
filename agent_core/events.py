"""Typed events that agents yield as they run. Surfaces render them; agents know no surface."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from tools.plan import TripPlan


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "event"


@dataclass(frozen=True, slots=True)
class StepStarted(Event):
    kind: ClassVar[str] = "step"
    step: int
    max_steps: int


@dataclass(frozen=True, slots=True)
class Thought(Event):
    """Visible reasoning text the model wrote alongside its tool calls (think blocks removed)."""

    kind: ClassVar[str] = "thought"
    step: int
    text: str


@dataclass(frozen=True, slots=True)
class TextDelta(Event):
    """More of the text the person will read, as the model writes it (never think blocks or
    tool-call text). The pieces of one step joined are the step's visible text so far."""

    kind: ClassVar[str] = "delta"
    step: int
    text: str


@dataclass(frozen=True, slots=True)
class TextReset(Event):
    """The text streamed since `step`'s first TextDelta (or the last TextReset) is withdrawn: the
    run asked the model for another turn instead of taking it (a follow-up such as the request to
    call submit_plan, or a review asking for a better plan). A surface clears what it shows of
    that text and keeps its place: the text that follows (the next step's, or the answer) replaces
    it there, so the person sees one answer growing in one place. The deltas after the last reset
    joined are the text that counts."""

    kind: ClassVar[str] = "text_reset"
    step: int


@dataclass(frozen=True, slots=True)
class ToolCalled(Event):
    kind: ClassVar[str] = "tool"
    step: int
    tool_call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolFinished(Event):
    kind: ClassVar[str] = "tool_result"
    step: int
    tool_call_id: str
    name: str
    ok: bool
    summary: str  # one line for progress displays


@dataclass(frozen=True, slots=True)
class QuestionAsked(Event):
    kind: ClassVar[str] = "human_input_request"
    tool_call_id: str
    question: str
    options: tuple[str, ...] = ()
    to: str = ""  # the traveller it is for; "" = whoever asked


@dataclass(frozen=True, slots=True)
class AnswerReady(Event):
    kind: ClassVar[str] = "answer"
    text: str
    plan: TripPlan | None = None


@dataclass(frozen=True, slots=True)
class Verdict(Event):
    """The review of an answer: one of the six labels, or (graded False) the outcome "not graded"
    — nothing in the answer could be checked and no model graded it, so no label is claimed
    (label and label_en are empty; surfaces say "not graded", and `reasons` say why)."""

    kind: ClassVar[str] = "verdict"
    label: str  # one of the six Chinese labels; "" when not graded
    label_en: str
    reasons: tuple[str, ...] = ()
    failed_checks: tuple[str, ...] = ()
    rubric_skipped: bool = False
    rounds: int = 1
    graded: bool = True

    @classmethod
    def not_graded(cls, reasons: tuple[str, ...], *, rounds: int = 1) -> Verdict:
        return cls("", "", reasons, (), True, rounds, graded=False)


@dataclass(frozen=True, slots=True)
class RunFailed(Event):
    kind: ClassVar[str] = "error"
    reason: str  # machine-readable: llm_unavailable, llm_rejected, llm_stream, token_limit, step_limit, loop, internal
    message: str  # what happened and what to do, in the user's language where known
    retryable: bool = False


@dataclass(frozen=True, slots=True)
class RunFinished(Event):
    kind: ClassVar[str] = "done"
    steps: int
    extra: dict[str, Any] = field(default_factory=dict)
