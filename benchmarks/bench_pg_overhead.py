"""Per-step overhead on PostgreSQL beside SQLite and LangGraph's AsyncPostgresSaver, in one run.

The scripted four-step conversation of benchmarks/bench_compare.py (ask_human -> train_search ->
hotel_search -> answer, the fake model in its own process, 0 ms model latency), sequentially,
through five runtimes in child processes whose rounds alternate (background load hits all alike):

  bare          the openai client in a loop: the floor
  ours          our runtime on SQLite (the default)
  ours_pg       our runtime on PostgreSQL: chat leases, fenced writes, LISTEN (BOT_DB_URL)
  langgraph     create_react_agent + AsyncSqliteSaver (for reference)
  langgraph_pg  create_react_agent + AsyncPostgresSaver

Overhead per step = the mean over the four steps of (the runtime's median step time - bare's),
as in bench_compare.py (overhead_per_step in benchmarks/_common.py). Target: ours_pg at most a
third of langgraph_pg's. Each PostgreSQL runtime gets a fresh database on the machine's server.

    python benchmarks/bench_pg_overhead.py [--seq 100] [--rounds 4] [--baseline DIR]

--baseline DIR adds `ours_pg_baseline`: ours on PostgreSQL run from another checkout's code
(e.g. `git worktree add DIR main`), in the same rounds, for a before/after from one run.

Prints ONE JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, guard_network, overhead_per_step
from _fake_model import FakeModelProcess
from _pg_databases import bench_database
from _runtimes import PG_URL_ENV, missing_deps
from bench_compare import Child, sequential_phase

RUNTIMES = ("bare", "ours", "ours_pg", "langgraph", "langgraph_pg")
BASELINE = "ours_pg_baseline"
MAX_RATIO = 1 / 3


async def _databases(stack: contextlib.AsyncExitStack, names: list[str]) -> dict[str, str]:
    return {name: await stack.enter_async_context(bench_database(name)) for name in names
            if name.endswith("_pg") or name == BASELINE}


def measure(args: argparse.Namespace, present: list[str], urls: dict[str, str]) -> dict[str, Any]:
    baseline = BASELINE if args.baseline else None
    with FakeModelProcess() as fm, tempfile.TemporaryDirectory(prefix="bench-pg-overhead-") as tmp_name:
        tmp = Path(tmp_name)
        children: dict[str, Child] = {}
        try:
            for name in present:
                if name in urls:
                    os.environ[PG_URL_ENV] = urls[name]  # the child reads it at start
                if name == baseline:
                    children[name] = Child(name, fm, tmp / f"{name}.sqlite3", runtime="ours_pg",
                                           root=args.baseline.resolve())
                else:
                    children[name] = Child(name, fm, tmp / f"{name}.sqlite3")
                children[name].read()  # ready (its warm-up conversations are done)
            return sequential_phase(children, fm, args.seq, args.rounds)
        finally:
            for child in children.values():
                child.close()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    absent = {name: missing_deps(name) for name in RUNTIMES}
    present = [name for name in RUNTIMES if not absent[name]]
    if args.baseline and "ours_pg" in present:
        present.insert(present.index("ours_pg") + 1, BASELINE)
    started = time.monotonic()
    async with contextlib.AsyncExitStack() as stack:
        urls = await _databases(stack, present)
        seq = await asyncio.to_thread(measure, args, present, urls)
    bare = seq.get("bare", {}).get("steps_median_ms")
    overhead = {name: overhead_per_step(seq.get(name, {}).get("steps_median_ms"), bare)
                for name in present if name != "bare"}
    checks: dict[str, bool] = {}
    ours, lg = overhead.get("ours_pg"), overhead.get("langgraph_pg")
    base = overhead.get(BASELINE)
    if ours is not None and lg is not None:
        checks["pg_overhead_le_third_of_langgraph_pg"] = ours <= lg * MAX_RATIO
    runtimes: dict[str, Any] = {name: {k: seq[name].get(k) for k in ("conversations", "step_median_ms", "step_p99_ms", "steps_median_ms",
                                                                    "resume_median_ms")} for name in present}
    runtimes.update({name: {"missing_deps": absent[name]} for name in RUNTIMES if absent[name]})
    return {
        "bench": "pg_overhead",
        "cores": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "seq_conversations": args.seq,
        "overhead_per_step_ms": overhead,
        "ratio_ours_pg_to_langgraph_pg": round(ours / lg, 3) if ours is not None and lg else None,
        **({"ratio_baseline_to_langgraph_pg": round(base / lg, 3)} if base is not None and lg else {}),
        "runtimes": runtimes,
        "checks": checks,
        "ok": bool(checks) and all(checks.values()),
        "wall_s": round(time.monotonic() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=100, help="sequential conversations per runtime")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--baseline", type=Path, help="another checkout: its ours_pg runs beside ours (before/after)")
    args = parser.parse_args()
    guard_network()
    emit(asyncio.run(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
