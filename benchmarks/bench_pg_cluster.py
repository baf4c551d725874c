"""Several bot processes on one PostgreSQL: throughput on 1 vs 3 processes, and takeover time.

`python bot.py` processes (PostgreSQL through BOT_DB_URL, Telegram in webhook mode) sit behind a
round-robin balancer (tests/bot_cluster.py); the fake Bot API lives in this process and posts
every update to the balancer; the scripted model (benchmarks/_fake_model.py: ask_human ->
train_search -> hotel_search -> answer) is its own process. People write a request, wait for the
question, answer it after `THINK_S` (a person reads the question first: an answer that arrives
within milliseconds of the posting, stored by another process before the posting is recorded,
counts as sent before the question, see README, PostgreSQL) and wait for the plan.

  throughput   50 conversations in flight per process (each of the `--lanes` lanes runs
               `--per-lane` conversations one after the other) with a 1 s model, on 1 and on 3
               processes: conversations/s, and the per-step p99 minus the model's second (steps
               as in bench_compare.py: from the model server's arrival times and the client's).
               Target: 3 processes >= 2.5 x one; step p99 minus model <= 20 ms.
  takeover     3 processes (BOT_LEASE_S=--lease-s), 30 chats whose first model call is held
               (3 s); the process holding most of them is SIGKILLed; for each of its chats, the
               time from the kill to that chat's next model call, from another process.
               Target: max <= lease + 1 s.

    python benchmarks/bench_pg_cluster.py [--lanes 50] [--per-lane 2] [--lease-s 5]

Prints ONE JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import ANSWER, QUESTION, REQUEST, emit, guard_network, ms, pct
from _fake_model import FakeModelProcess, fetch_arrivals
from _pg_databases import bench_database
from bench_compare import steps_of

from tests.bot_cluster import Balancer, BotProcess, cluster_env, owners
from tests.fakes.telegram_api import FakeTelegram

FINAL_MARK = "Bund View Hotel"  # in the scripted final answer (_common.FINAL)
QUESTION_MARK = "❓"
MODEL_S = 1.0
THINK_S = 0.3
TARGETS = {"ratio_min": 2.5, "step_p99_minus_model_max_ms": 20.0, "takeover_over_lease_max_s": 1.0}


def _asked(tg: FakeTelegram, chat: int) -> bool:
    return any(QUESTION in m.text and m.text.lstrip().startswith(QUESTION_MARK) for m in tg.bot_messages(chat))


def _planned(tg: FakeTelegram, chat: int) -> bool:
    return any(FINAL_MARK in m.text and not m.text.lstrip().startswith(QUESTION_MARK) for m in tg.bot_messages(chat))


async def _conversation(tg: FakeTelegram, chat: int, key: str) -> list[float]:
    t0 = time.monotonic()
    tg.send_text(chat, f"[conv:{key}] {REQUEST}")
    await tg.wait_for(lambda t: _asked(t, chat), within=60)
    tq = time.monotonic()
    await asyncio.sleep(THINK_S)
    ta = time.monotonic()
    tg.send_text(chat, ANSWER)
    await tg.wait_for(lambda t: _planned(t, chat), within=60)
    return [t0, tq, ta, time.monotonic()]


async def _cluster(tmp: Path, db: str, fm: FakeModelProcess, n: int, **extra: str) -> tuple[Balancer, FakeTelegram, list[BotProcess]]:
    lb = await Balancer().__aenter__()
    tg = await FakeTelegram().start()
    env = cluster_env(db, fm.base_url, TELEGRAM_BOT_TOKEN=tg.token, TELEGRAM_API_BASE_URL=tg.base_url,
                      TELEGRAM_WEBHOOK_URL=lb.url + "/tg/hook", TELEGRAM_WEBHOOK_SECRET="bench-hook-secret",
                      BOT_LLM_MODEL="gpt-4o-mini", BOT_LLM_MAX_RETRIES="8", **extra)
    bots = list(await asyncio.gather(*(BotProcess.start(tmp, f"p{n}-{i}", env, within=60) for i in range(n))))
    lb.backends = [b.url for b in bots]
    return lb, tg, bots


async def _teardown(lb: Balancer, tg: FakeTelegram, bots: list[BotProcess]) -> None:
    for bot in bots:
        await bot.stop()
    await tg.close()
    await lb.__aexit__(None, None, None)


async def throughput(tmp: Path, fm: FakeModelProcess, n: int, lanes: int, per_lane: int) -> dict[str, Any]:
    async with bench_database(f"tp{n}") as db:
        lb, tg, bots = await _cluster(tmp, db, fm, n)
        try:
            prefix = f"tp{n}-L{int(MODEL_S * 1000)}-"
            times: dict[str, list[float]] = {}
            counter = iter(range(lanes * n * per_lane))

            async def lane(k: int) -> None:
                await asyncio.sleep(k * MODEL_S / (lanes * n))  # spread over the model's second
                for i in counter:
                    times[f"{prefix}{i}"] = await _conversation(tg, 8_000_000 + n * 100_000 + i, f"{prefix}{i}")

            started = time.monotonic()
            await asyncio.gather(*(lane(k) for k in range(lanes * n)))
            wall = time.monotonic() - started
            arrivals = await fetch_arrivals(fm.control, prefix)
        finally:
            await _teardown(lb, tg, bots)
    pooled, _, _ = steps_of(times, arrivals)
    p99 = pct(pooled, 99)
    return {"processes": n, "conversations": len(times), "conv_per_s": round(len(times) / wall, 2),
            "step_median_ms": ms(statistics.median(pooled)) if pooled else None,
            "step_p99_ms": ms(p99), "step_p99_minus_model_ms": ms(p99 - MODEL_S),
            "served_by": sorted(lb.served.values())}


async def takeover(tmp: Path, fm: FakeModelProcess, chats: int, lease_s: float) -> dict[str, Any]:
    async with bench_database("takeover") as db:
        lb, tg, bots = await _cluster(tmp, db, fm, 3, BOT_LEASE_S=str(lease_s))
        try:
            prefix = "to-L3000-"
            ids = {f"{prefix}{i}": 8_900_000 + i for i in range(chats)}
            for key, chat in ids.items():
                tg.send_text(chat, f"[conv:{key}] {REQUEST}")
            first: dict[str, list[float]] = {}
            async with asyncio.timeout(60):
                while len(first) < chats:  # every chat's first model call is in flight
                    first.update(await fetch_arrivals(fm.control, prefix))
                    await asyncio.sleep(0.05)
            held = await owners(db)
            by_pid = Counter(held.values())
            victim = max(bots, key=lambda b: by_pid.get(b.pid, 0))
            victims = {key for key, chat in ids.items() if held.get(f"telegram:{chat}:") == victim.pid}
            killed_at = time.monotonic()
            await victim.kill()
            again: dict[str, list[float]] = {}
            async with asyncio.timeout(lease_s * 4 + 30):
                while not victims <= again.keys():
                    for key, times in (await fetch_arrivals(fm.control, prefix)).items():
                        again.setdefault(key, []).extend(times)
                    await asyncio.sleep(0.02)
        finally:
            await _teardown(lb, tg, bots)
    took = sorted(min(t for t in again[key] if t > killed_at) - killed_at for key in victims)
    return {"lease_s": lease_s, "chats": chats, "victim_chats": len(victims),
            "takeover_median_s": round(statistics.median(took), 2) if took else None,
            "takeover_max_s": round(max(took), 2) if took else None}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    with FakeModelProcess() as fm, tempfile.TemporaryDirectory(prefix="bench-pg-cluster-") as tmp_name:
        tmp = Path(tmp_name)
        one = await throughput(tmp, fm, 1, args.lanes, args.per_lane)
        three = await throughput(tmp, fm, 3, args.lanes, args.per_lane)
        take = await takeover(tmp, fm, args.takeover_chats, args.lease_s)
    ratio = round(three["conv_per_s"] / one["conv_per_s"], 2) if one["conv_per_s"] else None
    p99 = max(x for x in (one["step_p99_minus_model_ms"], three["step_p99_minus_model_ms"]) if x is not None)
    checks = {
        "three_ge_2_5x_one": ratio is not None and ratio >= TARGETS["ratio_min"],
        "step_p99_minus_model_le_20ms": p99 <= TARGETS["step_p99_minus_model_max_ms"],
        "takeover_max_le_lease_plus_1s": take["takeover_max_s"] is not None
        and take["takeover_max_s"] <= args.lease_s + TARGETS["takeover_over_lease_max_s"],
    }
    return {"bench": "pg_cluster", "cores": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
            "one_process": one, "three_processes": three, "throughput_ratio": ratio,
            "step_p99_minus_model_ms_worst": p99, "takeover": take, "checks": checks,
            "ok": all(checks.values()), "wall_s": round(time.monotonic() - started, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=50, help="conversations in flight per process")
    parser.add_argument("--per-lane", type=int, default=2)
    parser.add_argument("--lease-s", type=float, default=5.0)
    parser.add_argument("--takeover-chats", type=int, default=30)
    args = parser.parse_args()
    guard_network()
    emit(asyncio.run(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
