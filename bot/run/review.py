"""Review of a plan before it is posted: the hook (PlanReviewer, its request and outcome) and
PlanValidator, the runtime's PlanReviewer on top of agent_core.validator.

Deterministic checks always run (on the structured plan, or on the rides, hotels, times and
prices read from a reply written only as text); the rubric runs only when the reviewer was given
a real model (the offline planner has none to lend, and the verdict then says the rubric was
skipped). Nothing checked and no rubric verdict: the verdict is "not graded" (Verdict.graded
False), never a label. When the verdict is 不满意 the findings go back to the planner as re-plan
feedback; the runtime decides how many rounds it allows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from agent_core.events import AnswerReady, Verdict
from agent_core.model import ChatModel, TokenUsage
from agent_core.schema import Message
from agent_core.validator.facts import FactSource
from agent_core.validator.labels import Label
from agent_core.validator.provider_facts import ProviderFacts
from agent_core.validator.tool_facts import ToolFacts
from agent_core.validator.validator import Assessment, Validator
from agent_core.validator.wording_run import NOTHING_CHECKED
from bot.settings import Settings
from tools.collection import ToolCollection
from tools.travel import Gazetteer, SandboxProvider


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


MAX_FEEDBACK_FINDINGS = 12


def build_plan_validator(
    settings: Settings, *, gazetteer: Gazetteer, model: ChatModel, tools: ToolCollection, sandbox: SandboxProvider | None,
) -> PlanValidator:
    """The reviewer bot.py wires in. Sandbox data is re-checked by id (fast, exact); live data by
    running the tools again (the sandbox does not know live numbers and ids). The offline
    planner lends no rubric model."""
    tz = ZoneInfo(settings.timezone)
    facts: FactSource
    if settings.travel_data == "sandbox" and sandbox is not None:
        facts = ProviderFacts(sandbox, gazetteer)
    else:
        facts = ToolFacts(tools, gazetteer, lambda: datetime.now(tz))
    return PlanValidator(
        facts=facts, tools=tools, rubric_model=None if settings.offline_model else model,
        timezone=settings.timezone, home_city=settings.home_city,
    )


class PlanValidator:
    def __init__(
        self, *, facts: FactSource, tools: ToolCollection, rubric_model: ChatModel | None, timezone: str = "Asia/Shanghai",
        home_city: str = "北京", max_steps: int = 12, clock: Callable[[], datetime] | None = None,
    ) -> None:
        """`tools`: the bot's tool collection (the Validator drops ask_human, submit_plan and
        terminate from it); `rubric_model`: the LLM, or None with the offline planner."""
        self.validator = Validator(facts=facts, tools=tools, model=rubric_model, max_steps=max_steps, home_city=home_city)
        self.grades_text = rubric_model is not None
        self._tz = ZoneInfo(timezone)
        self._clock = clock or (lambda: datetime.now(self._tz))

    async def review(self, request: ReviewRequest) -> ReviewOutcome:
        """A plan is checked; a reply without one has its rides, hotels, times and prices read
        from the text and checked; when nothing could be checked and no model graded it, the
        verdict says "not graded" rather than claiming a label."""
        found = await self.validator.assess(
            request=request.request, reply=request.answer.text, plan=request.answer.plan,
            messages=request.messages, lang=request.lang, now=self._clock(), usage=request.usage,
        )
        verdict = verdict_of(found, request.lang, rounds=request.round + 1)
        feedback = replan_feedback(found, request.lang) if found.unsatisfied else None
        return ReviewOutcome(verdict, feedback)


def verdict_of(found: Assessment, lang: str, *, rounds: int) -> Verdict:
    zh = lang == "zh"
    report = found.report
    if found.label is None:
        why = [NOTHING_CHECKED().render(lang)]
        if found.rubric_error is not None:
            why.append(f"模型评审没有给出结论（{found.rubric_error.reason}）" if zh
                       else f"the model review gave no verdict ({found.rubric_error.reason})")
        return Verdict.not_graded(tuple(why), rounds=rounds)
    failed = tuple(f.line(lang) for f in report.findings) if report else ()
    reasons: list[str] = []
    if report is not None:
        for f in report.findings:
            problem = f.problem_text(lang)
            reasons.append(f"{f.category.text(lang)}：{f.item}：{problem}" if zh else f"{f.category.text(lang)}: {f.item}: {problem}")
        if report.ok and found.from_text:
            reasons.append(f"回复没有结构化行程；从文字中读出 {report.lookups} 项（车次/航班、酒店）并核对，时间和价格一致"
                           if zh else f"the reply has no structured plan; {report.lookups} items read from its text (rides, hotels) were checked: times and prices match")
        elif report.ok:
            reasons.append(f"已按工具重新核对 {report.lookups} 项（车次/航班、酒店、景点），时间、价格、城市一致"
                           if zh else f"{report.lookups} items re-checked with the tools (rides, hotels, sights): times, prices and cities match")
        if report.ok and not report.has_backups and found.rubric_skipped:
            reasons.append("行程没有备选方案" if zh else "the plan has no backups")
    else:
        reasons.append("回复里没有结构化行程可核对" if zh else "the reply holds no structured plan to check")
    if found.rubric is not None:
        reasons += list(found.rubric.reasons)
    elif found.rubric_error is not None:
        reasons.append(f"模型评审没有给出结论（{found.rubric_error.reason}），只做了自动核对"
                       if zh else f"the model review gave no verdict ({found.rubric_error.reason}); automatic checks only")
    else:
        reasons.append("未做模型评审（离线规划器），只做了自动核对" if zh else "rubric skipped (offline planner): automatic checks only")
    return Verdict(found.label.zh, found.label.en, tuple(reasons), failed, found.rubric_skipped, rounds)


def replan_feedback(found: Assessment, lang: str) -> str:
    """What the planner reads before it tries again: the verdict, each failed check with its
    evidence, and the rubric's reasons when the checks found nothing. The findings stay in English
    whatever the person's language: exact for the model, and safe for the offline planner, which
    reads the note as a turn of the conversation (Chinese findings such as "到达时间 …" would be
    read as a destination)."""
    zh = lang == "zh"
    assert found.label is not None, "only a graded answer is sent back"
    lines = [
        f"评审结论：{found.label.zh}。请逐条修正下列问题，重新查询工具后再提交行程："
        if zh else f"Review verdict: {found.label.en} ({found.label.zh}). Fix each problem below, re-query the tools, then submit the plan again:"
    ]
    report = found.report
    if report is not None:
        lines += [f"- {f.line()}" for f in report.findings[:MAX_FEEDBACK_FINDINGS]]
    if found.from_text:
        lines.append("- The reply has no structured plan: end with submit_plan(summary, plan) built from the tool results.")
    if found.rubric is not None and (report is None or report.ok or found.rubric.label is Label.NOT_LOGICAL):
        lines += [f"- {r}" for r in found.rubric.reasons]
    return "\n".join(lines)
