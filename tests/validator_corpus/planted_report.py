"""Running the planted-fault corpus through the Validator's checks, and the per-kind table for the
README (`python -m tests.validator_corpus.planted --report`).

A case is checked as the reviewer checks an answer: the person's constraints from the request,
the run's tool results from the stored conversation, then the structured plan (with the reply
text) or, when the answer was written only as text, the rides and hotels read from the text.
Two fact sources: the sandbox by id (ProviderFacts) and the tools run again (ToolFacts).
"""

from __future__ import annotations

import time
from collections import defaultdict
from datetime import date
from typing import Any

from agent_core.schema import Message
from agent_core.validator.checker import PlanChecker
from agent_core.validator.constraints import read_constraints
from agent_core.validator.evidence import RunEvidence
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.tool_facts import ToolFacts
from tests.validator_support import Sandbox, load_sandbox, run_clock
from tools.plan import TripPlan

SOURCES = ("provider", "tools")


def facts_for(sandbox: Sandbox, source: str, today: str) -> FactSource:
    now = run_clock(today)
    return sandbox.facts() if source == "provider" else ToolFacts(sandbox.tools, sandbox.gazetteer, lambda: now)


_EVIDENCE: dict[str, RunEvidence] = {}


def evidence_of(route: dict[str, Any]) -> RunEvidence:
    if route["route"] not in _EVIDENCE:
        _EVIDENCE[route["route"]] = RunEvidence.from_messages([Message.model_validate(m) for m in route["messages"]])
    return _EVIDENCE[route["route"]]


async def check_case(sandbox: Sandbox, route: dict[str, Any], case: dict[str, Any], source: str) -> CheckReport:
    today = date.fromisoformat(route["today"])
    checker = PlanChecker(facts_for(sandbox, source, route["today"]))
    constraints = read_constraints([case["request"]], today)
    evidence = evidence_of(route)
    if case["plan"] is None:
        report, _read = await checker.check_text(case["text"], constraints, evidence, today)
        return report
    return await checker.check(TripPlan.model_validate(case["plan"]), constraints, evidence=evidence, text=case["text"])


def caught(case: dict[str, Any], report: CheckReport) -> bool:
    """Clean: nothing found. Planted: a finding of the expected category names the planted item."""
    if case["expected"] == "ok":
        return report.ok
    expected = Category(case["expected"])
    return any(f.category is expected and case["item"] in f.item for f in report.findings)


async def report() -> str:
    from tests.validator_corpus.planted import FAULTS, load

    sandbox = load_sandbox()
    routes = load()
    rows: dict[str, dict[str, Any]] = defaultdict(lambda: {"routes": 0, "provider": 0, "tools": 0, "expected": ""})
    started = time.perf_counter()
    for route in routes:
        for case in route["cases"]:
            kind = "clean" if case["expected"] == "ok" else case["kind"]
            row = rows[kind]
            row["routes"] += 1
            row["expected"] = case["expected"]
            for source in SOURCES:
                row[source] += caught(case, await check_case(sandbox, route, case, source))
    seconds = time.perf_counter() - started
    order = ["clean", *(k for k, _ in FAULTS)]
    lines = ["| fault kind | finding | cases | caught: sandbox by id | caught: tools re-run |", "|---|---|---|---|---|"]
    for kind in order:
        row = rows.get(kind)
        if row is None:
            continue
        what = "no finding" if kind == "clean" else Category(row["expected"]).text("en")
        lines.append(f"| {kind} | {what} | {row['routes']} | {row['provider']}/{row['routes']} | {row['tools']}/{row['routes']} |")
    total = sum(r["routes"] for r in rows.values())
    lines.append(f"\n{len(routes)} routes, {total} cases ({rows['clean']['routes']} clean), "
                 f"{len(order) - 1} fault kinds; both sources checked in {seconds:.1f} s.")
    return "\n".join(lines)
