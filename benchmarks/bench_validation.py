"""Median milliseconds of the Validator's deterministic checks on a 3-day, 8-item plan (2 trains,
1 hotel stay, 5 sights) from the sandbox, constraints read from the request included; a fresh
fact source per run, as the reviewer has per review. Prints ONE JSON line.

Budget (issue 7): <= 50 ms median on the sandbox.
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

from agent_core.validator.checker import PlanChecker  # noqa: E402
from agent_core.validator.constraints import read_constraints  # noqa: E402
from agent_core.validator.provider_facts import ProviderFacts  # noqa: E402
from tools.plan import TripPlan  # noqa: E402
from tools.travel import Gazetteer, SandboxProvider  # noqa: E402

PLAN = ROOT / "tests" / "validator_corpus" / "ok_bj_sh_train.json"
RUNS = 200
BUDGET_MS = 50.0


async def main() -> None:
    entry = json.loads(PLAN.read_text(encoding="utf-8"))
    plan = TripPlan.model_validate(entry["plan"])
    plan.visits = plan.visits[:5]
    plan.total_cost = plan.computed_total()
    items = len(plan.legs) + len(plan.stays) + len(plan.visits)
    gazetteer = Gazetteer.load()
    provider = SandboxProvider(gazetteer)
    today = date.fromisoformat(entry["today"])
    times = []
    findings = -1
    for _ in range(RUNS):
        started = time.perf_counter()
        report = await PlanChecker(ProviderFacts(provider, gazetteer)).check(plan, read_constraints([entry["request"]], today))
        times.append((time.perf_counter() - started) * 1000)
        findings = len(report.findings)
    median = statistics.median(times)
    print(json.dumps({
        "bench": "validation", "plan_items": items, "days": 3, "runs": RUNS, "findings": findings,
        "median_ms": round(median, 3), "p95_ms": round(sorted(times)[int(RUNS * 0.95) - 1], 3),
        "budget_ms": BUDGET_MS, "ok": median <= BUDGET_MS,
    }))


if __name__ == "__main__":
    asyncio.run(main())
