"""Where a step's time goes: bench_compare's scripted conversation, timed around each model call.

Not part of `make bench` (its name has no `bench_` prefix): a tool for finding where ours spends
the wall time that bench_compare counts as per-step overhead. Each runtime named runs N
conversations one after another in this process, against the fake model in its own process; the
model server stamps when each request arrived and when its reply was ready, so each part is
measured on one clock (CLOCK_MONOTONIC):

  before_first_call   request sent -> the first model call arrives (the message stored, the run started)
  after_question      the first reply ready -> the question received (the pause stored, the question posted)
  resume              answer sent -> the model asked again (the answer stored and bound)
  between_calls       a reply ready -> the next model call arrives (the tool run, the step recorded)
  after_answer        the last reply ready -> the final answer received (stored, posted)

    python benchmarks/step_parts.py [--runtimes ours,bare] [--n 80]

Prints ONE JSON line: the median of each part in ms, per runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ANSWER, emit, guard_network
from _fake_model import FakeModelProcess, fetch_arrivals
from _runtimes import make_driver


async def parts_of(name: str, fm: FakeModelProcess, db: Path, n: int) -> dict[str, float]:
    driver: Any = make_driver(name, fm.base_url, db)
    await driver.open()
    for i in range(5):  # warm up: imports, first connections, schema
        await driver.ask(f"w-{name}-{i}")
        await driver.reply(f"w-{name}-{i}", ANSWER)
    prefix = f"p-{name}-"
    times: dict[str, tuple[float, float, float, float]] = {}
    for i in range(n):
        key = f"{prefix}{i}"
        t0 = time.monotonic()
        await driver.ask(key)
        tq = ta = time.monotonic()
        await driver.reply(key, ANSWER)
        times[key] = (t0, tq, ta, time.monotonic())
    await driver.close()
    arrived = await fetch_arrivals(fm.control, prefix)
    ready = await fetch_arrivals(fm.control, prefix, ready=True)
    parts: dict[str, list[float]] = {k: [] for k in
                                     ("before_first_call", "after_question", "resume", "between_calls", "after_answer")}
    for key, (t0, tq, ta, tf) in times.items():
        r, y = arrived[key], ready[key]
        parts["before_first_call"].append(r[0] - t0)
        parts["after_question"].append(tq - y[0])
        parts["resume"].append(r[1] - ta)
        parts["between_calls"] += [r[2] - y[1], r[3] - y[2]]
        parts["after_answer"].append(tf - y[3])
    return {k: round(statistics.median(v) * 1000, 3) for k, v in parts.items()}


async def main(runtimes: list[str], n: int) -> None:
    out: dict[str, Any] = {"bench": "step_parts", "n": n}
    with FakeModelProcess() as fm, tempfile.TemporaryDirectory() as tmp:
        for name in runtimes:
            out[name] = await parts_of(name, fm, Path(tmp) / f"{name}.sqlite3", n)
    emit(out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtimes", default="ours,bare")
    parser.add_argument("--n", type=int, default=80)
    args = parser.parse_args()
    guard_network()
    asyncio.run(main(args.runtimes.split(","), args.n))
