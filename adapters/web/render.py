"""Agent events as web chat SSE payloads (adapters.web.payloads names each event and its data)."""

from __future__ import annotations

import hashlib
from urllib.parse import parse_qs, quote, urlsplit

from pydantic import BaseModel

from adapters.web.payloads import (
    AnswerData,
    CostLineOut,
    DeltaData,
    DoneData,
    ErrorData,
    PlanCostsOut,
    ShareOut,
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
from agent_core.plan_words import place, priced, share_text, total_text
from tools.plan import TripPlan
from tools.plan_costs import plan_costs


def progress_data(event: Event, run: str = "", lang: str = "en") -> tuple[str, BaseModel] | None:
    """`run`: the run's reference, on its step events (the page's Stop names it); `lang`: the
    conversation's, which a plan's rows and places are worded in."""
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
            return "answer", answer_data(event, lang)
        case Verdict():
            return "verdict", verdict_data(event)
    return None


def verdict_data(verdict: Verdict, run: str = "") -> VerdictData:
    """`run`: the run whose answer it reviews (a reload's event stream skips one the view drew)."""
    return VerdictData(
        label=verdict.label,
        label_en=verdict.label_en,
        reasons=list(verdict.reasons),
        failed_checks=list(verdict.failed_checks),
        rubric_skipped=verdict.rubric_skipped,
        rounds=verdict.rounds,
        graded=verdict.graded,
        run=run or None,
    )


def file_url(session_id: str, filename: str, content: str) -> str:
    """Where the page downloads a plan's file. `v` names this very file (its content): a plan made
    again has files of the same names, and a link keeps giving the file it came with (the outbox
    row that delivered it keeps the file)."""
    return f"/api/sessions/{quote(session_id)}/files/{quote(filename)}?v={file_key(content)}"


def file_key(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()[:16]


def file_key_of(url: str) -> str:
    """The `v` of a file's link ("" for a link without one)."""
    return parse_qs(urlsplit(url).query).get("v", [""])[0]


def answer_data(answer: AnswerReady, lang: str) -> AnswerData:
    if answer.plan is None:
        return AnswerData(text=answer.text)
    return AnswerData(text=answer.text, plan=answer.plan, costs=costs_out(answer.plan, lang),
                      places=places_of(answer.plan, lang))


def costs_out(plan: TripPlan, lang: str) -> PlanCostsOut:
    """The plan's rows as tools.plan_costs prices them and agent_core.plan_words words them,
    as every other surface shows them (the page draws these, it computes no money)."""
    costs = plan_costs(plan)
    cur = plan.currency
    return PlanCostsOut(
        lines=[CostLineOut(kind=c.kind, index=c.index, who=c.who, amount=c.amount, text=priced(c, lang, cur),
                           counted=bool(c.counted) and bool(c.amount)) for c in costs.lines],
        total=costs.total,
        text=total_text(costs, lang, cur),
        shares=[ShareOut(who=s.who, amount=s.amount, text=share_text(costs, s.who, lang, cur)) for s in costs.shares],
    )


def places_of(plan: TripPlan, lang: str) -> dict[str, str]:
    """Every place the plan names, as the plan's reader reads it (only those that differ)."""
    names = {plan.origin_city, plan.destination_city}
    for person in plan.party:
        names.add(person.home_city)
    for leg in [*plan.legs, *(leg for person in plan.party for leg in person.legs)]:
        names.update((leg.origin, leg.destination))
    names.update(n for s in plan.stays for n in (s.name, s.city))
    names.update(n for v in plan.visits for n in (v.name, v.city))
    shown = {name: place(name, lang) for name in sorted(names) if name}
    return {name: label for name, label in shown.items() if label != name}
