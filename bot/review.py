"""The hook through which a Validator grades an answer before it is posted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_core.events import AnswerReady, Verdict
from agent_core.model import TokenUsage
from agent_core.schema import Message


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    session_id: str
    lang: str
    request: str  # the person's message that started the run
    answer: AnswerReady
    messages: Sequence[Message]  # the whole conversation the planner saw
    round: int  # 0 for the first answer, 1.. for re-plans
    usage: TokenUsage | None = None  # the run's: the reviewer's model calls count to the session too


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    verdict: Verdict | None  # None: no review; Verdict.graded False: reviewed, but nothing could be checked
    replan_feedback: str | None = None  # set when the planner should try again with these findings


class PlanReviewer(Protocol):
    async def review(self, request: ReviewRequest) -> ReviewOutcome: ...
