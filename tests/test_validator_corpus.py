"""The deterministic checker on the corpus: every correct plan passes, every injected fault is
flagged with its category (and nothing else is), and the verdict is the category's cap."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from agent_core.validator.checker import PlanChecker
from agent_core.validator.constraints import read_constraints
from agent_core.validator.findings import Category
from agent_core.validator.labels import Label
from agent_core.validator.tool_facts import ToolFacts
from tests.validator_support import Sandbox, load_sandbox, run_clock
from tools.plan import TripPlan

CORPUS = sorted((Path(__file__).parent / "validator_corpus").glob("*.json"))
NOW = run_clock("2026-12-01")
ENTRIES = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in CORPUS}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


def test_corpus_is_big_enough_and_covers_every_fault() -> None:
    entries = list(ENTRIES.values())
    assert len(entries) >= 40
    faults = {e["fault"] for e in entries if e["fault"]}
    assert faults == {
        "wrong_departure_time", "no_such_ride", "hotel_other_city", "overlapping_legs", "too_short_transfer",
        "over_budget", "forbidden_transport", "wrong_date", "missing_return_leg", "total_mismatch",
    }
    assert sum(1 for e in entries if e["expected"] == "ok") >= 10


@pytest.mark.parametrize("source", ["provider", "tools"])
@pytest.mark.parametrize("name", sorted(ENTRIES))
async def test_corpus_plan(name: str, source: str, sandbox: Sandbox) -> None:
    """Both fact sources: lookups by id (ProviderFacts) and re-running the tools (ToolFacts)."""
    entry = ENTRIES[name]
    facts = sandbox.facts() if source == "provider" else ToolFacts(sandbox.tools, sandbox.gazetteer, lambda: NOW)
    plan = TripPlan.model_validate(entry["plan"])
    constraints = read_constraints([entry["request"]], date.fromisoformat(entry["today"]))
    report = await PlanChecker(facts).check(plan, constraints)
    lines = [f.line() for f in report.findings]
    if entry["expected"] == "ok":
        assert report.ok, lines
        assert report.label() in (Label.EXCELLENT, Label.NO_CONTINGENCY)
        return
    expected = Category(entry["expected"])
    assert report.findings, f"{entry['fault']} was not flagged"
    assert report.categories() == {expected}, lines
    assert report.label() is expected.cap
    for f in report.findings:
        assert f.item and f.evidence  # each finding names the plan item and the evidence
