"""Median milliseconds of the Validator's deterministic checks on a 3-day, 8-item plan (2 trains,
1 hotel stay, 5 sights) from the sandbox, as the reviewer runs them per answer: constraints read
from the request, the run's tool results read from its conversation (grounding), every check on
the structured plan and its reply text; a fresh fact source per run. Also the same answer
written only as text (its rides and hotels read from the prose and checked). Prints ONE JSON line.

Budget (issues 7 and 15): <= 50 ms median on the sandbox.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_core.schema import Message  # noqa: E402
from agent_core.validator.checker import PlanChecker  # noqa: E402
from agent_core.validator.constraints import read_constraints  # noqa: E402
from agent_core.validator.evidence import RunEvidence  # noqa: E402
from agent_core.validator.provider_facts import ProviderFacts  # noqa: E402
from tools.plan import TripPlan  # noqa: E402
from tools.travel import Gazetteer, SandboxProvider  # noqa: E402

RUN = ROOT / "tests" / "validator_corpus" / "planted" / "hz_bj.json"  # 杭州 -> 北京, 3 days: 2 trains, 1 hotel, 5 sights
RUNS = 200
BUDGET_MS = 50.0


async def main() -> None:
    entry = json.loads(RUN.read_text(encoding="utf-8"))
    plan = TripPlan.model_validate(entry["plan"])
    items = len(plan.legs) + len(plan.stays) + len(plan.visits)
    messages = [Message.model_validate(m) for m in entry["messages"]]
    gazetteer = Gazetteer.load()
    provider = SandboxProvider(gazetteer)
    today = date.fromisoformat(entry["today"])
    times, text_times = [], []
    findings = text_findings = -1
    for _ in range(RUNS):
        started = time.perf_counter()
        constraints = read_constraints([entry["request"]], today)
        evidence = RunEvidence.from_messages(messages)
        report = await PlanChecker(ProviderFacts(provider, gazetteer)).check(plan, constraints, evidence=evidence, text=entry["text"])
        times.append((time.perf_counter() - started) * 1000)
        findings = len(report.findings)
        started = time.perf_counter()
        evidence = RunEvidence.from_messages(messages)
        text_report, _read = await PlanChecker(ProviderFacts(provider, gazetteer)).check_text(
            entry["text"], read_constraints([entry["request"]], today), evidence, today)
        text_times.append((time.perf_counter() - started) * 1000)
        text_findings = len(text_report.findings)
    median = statistics.median(times)
    print(json.dumps({
        "bench": "validation", "plan_items": items, "days": 3, "runs": RUNS, "findings": findings,
        "median_ms": round(median, 3), "p95_ms": round(sorted(times)[int(RUNS * 0.95) - 1], 3),
        "text_only_median_ms": round(statistics.median(text_times), 3), "text_only_findings": text_findings,
        "budget_ms": BUDGET_MS, "ok": median <= BUDGET_MS and findings == 0 and text_findings == 0,
    }))


if __name__ == "__main__":
    asyncio.run(main())
