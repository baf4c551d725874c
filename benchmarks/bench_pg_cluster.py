"""Several bot processes on one PostgreSQL: throughput on 1 vs 3 processes, and takeover time.

`python bot.py` processes (PostgreSQL through BOT_DB_URL, Telegram in webhook mode) sit behind a
round-robin balancer (tests/bot_cluster.py); the fake Bot API lives in this process and posts
every update to the balancer, 40 at a time (Telegram's default `max_connections`); the scripted
model (benchmarks/_fake_model.py: ask_human -> train_search -> hotel_search -> answer) is its
own process. People write a request, wait for the question, answer it after `--think-s` and
wait for the plan.

  throughput   50 conversations in flight per process (each of the `--lanes` lanes runs
               `--per-lane` conversations one after the other, the lanes' starts spread over
               one conversation's length) with a 1 s model, on 1 and on 3 processes:
               conversations/s, and the per-step p99 minus the model's second (steps as in
               bench_compare.py: from the model server's arrival times and the client's).
               Target: 3 processes >= 2.5 x one; step p99 minus model <= 20 ms.
               Each process first serves one conversation (`warm_up`, printed apart), as
               bench_pg_scale's first burst.
  takeover     3 processes (BOT_LEASE_S=--lease-s), 30 chats whose first model call is held
               (3 s); the process holding most of them is SIGKILLed; for each of its chats, the
               time from the kill to that chat's next model call, from another process.
               Target: max <= lease + 1 s.

Sized within Telegram's limits. A bot may send about 30 messages a second in all (whatever
number of processes send them) and about one a second per chat. A conversation here costs about
9 of them (progress messages and their edits, a draft, question, plan; about 5 when a busy pacer
folds edits together), so 150 conversations that
answer their question at once (the old `THINK_S` of 0.3 s) would ask for 150-200 messages a
second: one process was held at 29 a second by its own pacer (its throughput was Telegram's,
not ours), and three processes (a pacer each) sent 87 a second, three times what Telegram
takes. People answer in tens of seconds; with `--think-s 60` the 150 conversations of the
3-process run need about 20 messages a second, inside the limit, and what is left to compare
is what the processes add. `telegram` in the output says how many were sent, the busiest
second and how many went over 30 in a second (`global_violations`).

Steps 1 and 4 end when the fake Bot API stored the question or the plan (the message's
`sent_at`; `seen_late_ms` is how much later the harness's waiter saw it), so they include
Telegram's one-message-a-second per chat: a progress edit sent just before the question holds it back up
to a second. `model_late_ms` and `step_p99_minus_model_as_held_ms` are bench_pg_scale's: how late the fake
model's replies were ready after its second, and the p99 with each step's model call as held.
`bot_step_p99_minus_model_ms` is the step p99 minus the model for steps 2 and 3 (model call to
model call, the bot's own work: the answer's webhook, its storage, the wake-up, the writes).
`machine` is the whole machine's load over a throughput run (benchmarks/_machine_load.py): cores
busy on average and in the busiest second, and the share of time some task waited for a CPU.

    python benchmarks/bench_pg_cluster.py [--lanes 50] [--per-lane 1] [--think-s 60] [--lease-s 5]

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
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import (
    ANSWER,
    QUESTION,
    REQUEST,
    component_cpu,
    emit,
    guard_network,
    ms,
    pct,
    speed_probe_ms,
)
from _fake_model import FakeModelProcess, fetch_arrivals
from _machine_load import MachineLoad
from _pg_databases import bench_database
from bench_compare import steps_of
from bench_pg_scale import model_lateness

from tests.bot_cluster import Balancer, BotProcess, cluster_env, owners
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_state import StoredMessage

FINAL_MARK = "Bund View Hotel"  # in the scripted final answer (_common.FINAL)
QUESTION_MARK = "❓"
MODEL_S = 1.0
MODEL_CALLS = 4  # per conversation
WEBHOOK_CONNECTIONS = 40  # Telegram's default max_connections: updates of different chats at once
TARGETS = {"ratio_min": 2.5, "step_p99_minus_model_max_ms": 20.0, "takeover_over_lease_max_s": 1.0}


def _is_question(text: str) -> bool:
    return QUESTION in text and text.lstrip().startswith(QUESTION_MARK)


def _is_plan(text: str) -> bool:
    return FINAL_MARK in text and not text.lstrip().startswith(QUESTION_MARK)


async def _arrived(tg: FakeTelegram, chat: int, wanted: Callable[[str], bool], seen: list[float]) -> float:
    """When the fake Bot API stored the first bot message of `chat` that is `wanted`; `seen`
    gets how much later the waiter saw it."""
    found: StoredMessage | None = None

    def there(t: FakeTelegram) -> bool:
        nonlocal found
        found = next((m for m in t.bot_messages(chat) if wanted(m.text)), None)
        return found is not None

    await tg.wait_for(there, within=60)
    assert found is not None
    seen.append(time.monotonic() - found.sent_at)
    return found.sent_at


async def _conversation(tg: FakeTelegram, chat: int, key: str, think_s: float, seen: list[float]) -> list[float]:
    t0 = time.monotonic()
    tg.send_text(chat, f"[conv:{key}] {REQUEST}")
    tq = await _arrived(tg, chat, _is_question, seen)
    await asyncio.sleep(think_s)
    ta = time.monotonic()
    tg.send_text(chat, ANSWER)
    return [t0, tq, ta, await _arrived(tg, chat, _is_plan, seen)]


async def _cluster(tmp: Path, db: str, fm: FakeModelProcess, n: int, **extra: str) -> tuple[Balancer, FakeTelegram, list[BotProcess]]:
    lb = await Balancer().__aenter__()
    tg = await FakeTelegram(webhook_connections=WEBHOOK_CONNECTIONS).start()
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


def _cpu_snapshot(fm: FakeModelProcess, bots: list[BotProcess]) -> dict[str, float]:
    return {"harness": time.process_time(), **component_cpu(fm.pid, [b.pid for b in bots])}


def _tg_stats(tg: FakeTelegram, since: float, wall: float, convs: int) -> dict[str, Any]:
    reqs = [r for r in tg.requests if r.at >= since]
    by_method = Counter(r.method for r in reqs)
    counted = sorted(r.at for r in reqs if r.method in ("sendmessage", "editmessagetext", "sendmessagedraft", "senddocument"))
    peak, j = 0, 0
    for i, at in enumerate(counted):
        while counted[j] <= at - 1.0:
            j += 1
        peak = max(peak, i - j + 1)
    return {"per_conversation": {m: round(c / max(convs, 1), 2) for m, c in sorted(by_method.items())},
            "messages_per_s": round(len(counted) / wall, 1), "messages_peak_1s": peak,
            "global_violations": sum(1 for v in tg.violations if v.kind == "global")}


async def _warm_up(tg: FakeTelegram, fm: FakeModelProcess, n: int) -> dict[str, Any]:
    """One conversation a process before the measured run (the balancer's round robin spreads
    them), as bench_pg_scale's first burst: a process's first conversation pays once what a
    running bot has paid (its first model connection, each statement's first Parse and each
    server function's first compile on its connections); its step 1 took 35 ms over the model,
    against 15-20 for the next ones."""
    prefix = f"tw{n}-L{int(MODEL_S * 1000)}-"
    times = dict(zip((f"{prefix}{i}" for i in range(n)), await asyncio.gather(
        *(_conversation(tg, 8_700_000 + n * 100 + i, f"{prefix}{i}", 1.0, []) for i in range(n))), strict=True))
    pooled, _, _ = steps_of(times, await fetch_arrivals(fm.control, prefix))
    return {"conversations": len(times), "step_max_minus_model_ms": ms(max(pooled) - MODEL_S) if pooled else None}


async def throughput(tmp: Path, fm: FakeModelProcess, n: int, lanes: int, per_lane: int, think_s: float) -> dict[str, Any]:
    async with bench_database(f"tp{n}") as db:
        lb, tg, bots = await _cluster(tmp, db, fm, n, BOT_LEASE_S="15")  # the default lease
        try:
            prefix = f"tp{n}-L{int(MODEL_S * 1000)}-"
            times: dict[str, list[float]] = {}
            stuck: list[int] = []
            seen: list[float] = []
            counter = iter(range(lanes * n * per_lane))

            async def lane(k: int) -> None:
                # spread over a conversation's length, so messages go out at a steady rate
                await asyncio.sleep(k * (MODEL_CALLS * MODEL_S + think_s) / (lanes * n))
                for i in counter:
                    chat = 8_000_000 + n * 100_000 + i
                    try:
                        times[f"{prefix}{i}"] = await _conversation(tg, chat, f"{prefix}{i}", think_s, seen)
                    except AssertionError:  # not done within a minute: count it, show it, go on
                        stuck.append(chat)
                        print(f"stuck: chat {chat}: {[m.summary() for m in tg.bot_messages(chat)]}", file=sys.stderr)

            warm = await _warm_up(tg, fm, n)
            started = time.monotonic()
            cpu0 = _cpu_snapshot(fm, bots)
            with MachineLoad() as load:
                await asyncio.gather(*(lane(k) for k in range(lanes * n)))
            wall = time.monotonic() - started
            cpu1 = _cpu_snapshot(fm, bots)
            telegram = _tg_stats(tg, started, wall, len(times))
            sent = [(r.at, r.method, r.chat_id) for r in tg.requests if r.at >= started]
            arrivals = await fetch_arrivals(fm.control, prefix)
            ready = await fetch_arrivals(fm.control, prefix, ready=True)
        finally:
            await _teardown(lb, tg, bots)
    if os.environ.get("BENCH_DUMP"):  # the raw timelines, to look into a tail (as bench_pg_scale)
        dump = json.dumps({"times": times, "arrivals": arrivals, "telegram": sent})
        await asyncio.to_thread(Path(f"{os.environ['BENCH_DUMP']}.{n}p").write_text, dump)
    pooled, resumes, by_step = steps_of(times, arrivals)
    p99 = pct(pooled, 99)
    bot_p99 = pct(by_step[1] + by_step[2], 99)
    lengths = [t[-1] - t[0] for t in times.values()]
    return {"processes": n, "conversations": len(times), "stuck": len(stuck), "conv_per_s": round(len(times) / wall, 2),
            "step_median_ms": ms(statistics.median(pooled)) if pooled else None,
            "step_p99_ms": ms(p99), "step_p99_minus_model_ms": ms(p99 - MODEL_S),
            "steps_p99_ms": [ms(pct(s, 99)) for s in by_step],
            "bot_step_p99_minus_model_ms": ms(bot_p99 - MODEL_S), "resume_p99_ms": ms(pct(resumes, 99)),
            **model_lateness(times, arrivals, ready),
            "seen_late_ms": {"median": ms(statistics.median(seen)) if seen else None, "p99": ms(pct(seen, 99))},
            # Little's law: conversations in flight over a conversation's mean length
            "conv_per_s_steady": round(lanes * n / statistics.mean(lengths), 2) if lengths else None,
            "served_by": sorted(lb.served.values()), "telegram": telegram, "warm_up": warm,
            "cpu_share": {k: round((cpu1[k] - cpu0[k]) / wall, 2) for k in cpu0}, "machine": load.figures()}


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
    started, probe_before = time.monotonic(), speed_probe_ms()
    with FakeModelProcess() as fm, tempfile.TemporaryDirectory(prefix="bench-pg-cluster-") as tmp_name:
        tmp = args.keep or Path(tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        one = await throughput(tmp, fm, 1, args.lanes, args.per_lane, args.think_s) if 1 in args.phases else {}
        three = await throughput(tmp, fm, 3, args.lanes, args.per_lane, args.think_s) if 3 in args.phases else {}
        take = await takeover(tmp, fm, args.takeover_chats, args.lease_s) if 0 in args.phases else {}
    ratio = round(three["conv_per_s"] / one["conv_per_s"], 2) if one.get("conv_per_s") and three else None
    p99s = [x for x in (one.get("step_p99_minus_model_ms"), three.get("step_p99_minus_model_ms")) if x is not None]
    p99 = max(p99s) if p99s else None
    bots = [x for x in (one.get("bot_step_p99_minus_model_ms"), three.get("bot_step_p99_minus_model_ms")) if x is not None]
    checks = {
        "every_conversation_finished": not one.get("stuck") and not three.get("stuck"),
        "three_ge_2_5x_one": ratio is not None and ratio >= TARGETS["ratio_min"],
        "step_p99_minus_model_le_20ms": p99 is not None and p99 <= TARGETS["step_p99_minus_model_max_ms"],
        "takeover_max_le_lease_plus_1s": take.get("takeover_max_s") is not None
        and take["takeover_max_s"] <= args.lease_s + TARGETS["takeover_over_lease_max_s"],
    }
    return {"bench": "pg_cluster", "cores": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
            "speed_probe_ms": {"before": probe_before, "after": speed_probe_ms()},
            "one_process": one, "three_processes": three, "throughput_ratio": ratio,
            "step_p99_minus_model_ms_worst": p99, "bot_step_p99_minus_model_ms_worst": max(bots) if bots else None,
            "takeover": take, "checks": checks,
            "ok": all(checks.values()), "wall_s": round(time.monotonic() - started, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=50, help="conversations in flight per process")
    parser.add_argument("--per-lane", type=int, default=1)
    parser.add_argument("--think-s", type=float, default=60.0, help="how long a person takes to answer")
    parser.add_argument("--lease-s", type=float, default=5.0)
    parser.add_argument("--takeover-chats", type=int, default=30)
    parser.add_argument("--phases", default="1,3,0", help="1: one process, 3: three, 0: takeover")
    parser.add_argument("--keep", type=Path, help="keep the bots' logs in this folder")
    args = parser.parse_args()
    args.phases = {int(p) for p in args.phases.split(",") if p.strip()}
    guard_network()
    emit(asyncio.run(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
