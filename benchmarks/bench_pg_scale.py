"""bench_compare's 50-concurrent-chats run on PostgreSQL: one process, then three on one database.

The runtime of bench_compare.py's `ours` (adapters.runtime.build_runtime, the scripted four-step
trip of benchmarks/_common.py, the fake model in its own process with 1 s latency) on PostgreSQL
(`ours_pg`: chat leases, fenced writes, LISTEN/NOTIFY), in 1 and then in 3 processes on one fresh
database. Each process keeps 50 conversations in flight (`--lanes`), `--per-lane` of them one
after the other in each lane, the lanes' starts spread over the model's second, as in
bench_compare's `conc50_1s`. A chat goes to whichever process takes its lease, not always the one
that submitted it: the question or answer then reaches the asking process through a NOTIFY
channel (as the web page's events reach any process; benchmarks/_runtimes.SHARED_EVENTS_ENV),
and `forwarded` counts them. Each process freezes its heap after its warm-up, as bot.py does after
start (without it one full collection of the collector stalled a process 190 ms mid-run).

The processes first serve one conversation a lane (`first_burst`, printed apart), then the
measured run. A process's first burst pays once what a running bot has already paid: the
model client opens a connection per call in flight (the sequential warm-up needed one), and
each pooled PostgreSQL connection meets each statement and server function for the first time
(a Parse, a PL/pgSQL compile). Seven runs of three processes on 2026-12-04: the first burst's
step p99 minus the model 32-152 ms (median 73), the measured run's 20-283 ms (median 60).

  throughput   conversations/s, all processes together: 3 processes >= 2.5 x one
  speed_probe_ms  a fixed Python loop, before and after (_common.speed_probe_ms): this machine's
               speed moves by up to half from one minute to the next, and the figures with it
  first_burst  the step figures of the first burst, before the measured run
  model_late_ms  how late the fake model's replies were ready after its second (median, p99):
               one Python process answering every lane wakes up late when it is busy, and
               that is counted in every step's figure; step_p99_minus_model_as_held_ms takes
               each step's model call as it was held instead of the nominal second
  steps        bench_compare's four steps per conversation (request -> question, answer ->
               third model call, third -> fourth, fourth -> answer seen), pooled: the p99 minus
               the model's second <= 20 ms
  machine      the whole machine over the run (_machine_load): cores busy on average and in
               the busiest second, and the share of time some task waited for a CPU. The lanes
               move in step, so the question-and-answer second and the second in which every lane
               starts its next conversation carry most of the CPU; when the busiest second needs
               all the cores, the p99 is hundreds of ms, whatever the average

Unlike bench_pg_cluster.py there is no chat platform in the way (Telegram's one message a second
per chat), so the figure is what the processes and the database add.

    python benchmarks/bench_pg_scale.py [--lanes 50] [--per-lane 2] [--processes 1,3]

Prints ONE JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import component_cpu, emit, guard_network, ms, pct, speed_probe_ms
from _fake_model import FakeModelProcess, fetch_arrivals
from _machine_load import MachineLoad
from _pg_databases import bench_database
from _runtimes import PG_URL_ENV, SHARED_EVENTS_ENV
from bench_compare import Child, conversation_steps, steps_of

MODEL_MS = 1000
TARGETS = {"ratio_min": 2.5, "step_p99_minus_model_max_ms": 20.0}


async def run_processes(fm: FakeModelProcess, tmp: Path, n: int, lanes: int, per_lane: int,
                        args_log: Path | None = None) -> dict[str, Any]:
    async with bench_database(f"scale{n}") as url:
        os.environ[PG_URL_ENV], os.environ[SHARED_EVENTS_ENV] = url, "1"  # the children read them at start
        children = [Child(f"p{i}", fm, tmp / f"unused-{n}-{i}.sqlite3", runtime="ours_pg", tag=f"_{n}p{i}",
                          log=args_log / f"p{n}-{i}.log" if args_log else None, freeze=True)
                    for i in range(n)]
        try:
            for child in children:
                child.read()  # ready (warmed up)
            cold_prefix, prefix = f"c{n}-L{MODEL_MS}-", f"k{n}-L{MODEL_MS}-"
            cold = await burst(children, cold_prefix, lanes, lanes)  # one conversation a lane
            pids = [c.proc.pid for c in children]
            cpu0, t0 = component_cpu(fm.pid, pids), time.monotonic()
            with MachineLoad() as load:
                results = await burst(children, prefix, lanes, lanes * per_lane)
            cpu1, spent = component_cpu(fm.pid, pids), time.monotonic() - t0
        finally:
            for child in children:
                child.close()
        arrivals, ready = await fetch_arrivals(fm.control, prefix), await fetch_arrivals(fm.control, prefix, ready=True)
        cold_arrivals = await fetch_arrivals(fm.control, cold_prefix)
    first_pooled, first_resumes, first_by_step = steps_of(
        {k: v for res in cold for k, v in res["times"].items()}, cold_arrivals)
    times = {k: v for res in results for k, v in res["times"].items()}
    if os.environ.get("BENCH_DUMP"):  # the raw timelines, to look into a tail
        dump = json.dumps({"times": times, "arrivals": arrivals})
        await asyncio.to_thread(Path(os.environ["BENCH_DUMP"]).write_text, dump)
    pooled, resumes, by_step = steps_of(times, arrivals)
    wall = max(res["wall_s"] for res in results)
    p99 = pct(pooled, 99)
    return {
        "processes": n, "conversations": len(times), "failed": sum(res["failed"] for res in results),
        "errors": [e for res in results for e in res["errors"]][:3],
        "conv_per_s": round(len(times) / wall, 2) if wall > 0 else None,
        "step_median_ms": ms(statistics.median(pooled)) if pooled else None,
        "step_p99_ms": ms(p99), "step_p99_minus_model_ms": p99_minus_model(pooled),
        "steps_p99_minus_model_ms": [p99_minus_model(s) for s in by_step],
        "resume_p99_ms": ms(pct(resumes, 99)),
        **model_lateness(times, arrivals, ready),
        "forwarded": sum(res.get("forwarded", 0) for res in results),
        # cores busy over the run; the machine has os.cpu_count() of them
        "cpu_cores": {k: round((cpu1[k] - cpu0[k]) / spent, 2) for k in cpu0},
        "cpu_ms_per_conversation": {k: round((cpu1[k] - cpu0[k]) * 1000 / max(len(times), 1), 1) for k in cpu0},
        "machine": load.figures(),
        "first_burst": {"conversations": len(first_resumes), "failed": sum(res["failed"] for res in cold),
                        "step_p99_minus_model_ms": p99_minus_model(first_pooled),
                        "steps_p99_minus_model_ms": [p99_minus_model(s) for s in first_by_step]},
    }


def p99_minus_model(steps: list[float]) -> float:
    return ms(pct(steps, 99) - MODEL_MS / 1000)


def model_lateness(times: dict[str, list[float]], arrivals: dict[str, list[float]],
                   ready: dict[str, list[float]]) -> dict[str, Any]:
    """How late the fake model's replies were ready (its event loop is busy at times: not the
    bots' doing), and the steps' p99 minus each step's model call as it was held."""
    late: list[float] = []
    minus_held: list[float] = []
    for key, conversation in times.items():
        r, g = arrivals.get(key, []), ready.get(key, [])
        if len(r) != 4 or len(g) != 4:
            continue
        held = [g[i] - r[i] for i in range(4)]
        late.extend(h - MODEL_MS / 1000 for h in held)
        steps = conversation_steps(conversation, r)
        minus_held.extend(step - h for step, h in zip(steps, held, strict=True))
    if not late:
        return {}
    return {"model_late_ms": {"median": ms(statistics.median(late)), "p99": ms(pct(late, 99))},
            "step_p99_minus_model_as_held_ms": ms(pct(minus_held, 99))}


async def burst(children: list[Child], prefix: str, lanes: int, total: int) -> list[dict[str, Any]]:
    """Every process its own `lanes` at once, `total` conversations each; their results."""
    for i, child in enumerate(children):
        child.send(cmd="conc", prefix=f"{prefix}p{i}-", lanes=lanes, total=total, stagger_s=MODEL_MS / 1000)
    return [await asyncio.to_thread(child.read) for child in children]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    started, probe_before = time.monotonic(), speed_probe_ms()
    out: dict[int, dict[str, Any]] = {}
    with FakeModelProcess() as fm, tempfile.TemporaryDirectory(prefix="bench-pg-scale-") as tmp_name:
        for n in args.processes:
            out[n] = await run_processes(fm, Path(tmp_name), n, args.lanes, args.per_lane, args.logs)
    one, three = out.get(1, {}), out.get(3, {})
    ratio = round(three["conv_per_s"] / one["conv_per_s"], 2) if one.get("conv_per_s") and three.get("conv_per_s") else None
    p99s = [r["step_p99_minus_model_ms"] for r in out.values() if r.get("step_p99_minus_model_ms") is not None]
    checks = {
        "every_conversation_finished": all(not r["failed"] and not r["first_burst"]["failed"] for r in out.values()),
        "three_ge_2_5x_one": ratio is not None and ratio >= TARGETS["ratio_min"],
        "step_p99_minus_model_le_20ms": bool(p99s) and max(p99s) <= TARGETS["step_p99_minus_model_max_ms"],
    }
    return {"bench": "pg_scale", "cores": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
            "speed_probe_ms": {"before": probe_before, "after": speed_probe_ms()},
            "model_ms": MODEL_MS, "lanes_per_process": args.lanes, "per_lane": args.per_lane,
            "one_process": one, "three_processes": three, "throughput_ratio": ratio,
            "step_p99_minus_model_ms_worst": max(p99s) if p99s else None,
            "checks": checks, "ok": all(checks.values()), "wall_s": round(time.monotonic() - started, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=50, help="conversations in flight per process")
    parser.add_argument("--per-lane", type=int, default=2, help="conversations one after the other in each lane")
    parser.add_argument("--processes", default="1,3")
    parser.add_argument("--logs", type=Path, help="a folder for the processes' stderr")
    args = parser.parse_args()
    args.processes = [int(p) for p in args.processes.split(",") if p.strip()]
    guard_network()
    emit(asyncio.run(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
