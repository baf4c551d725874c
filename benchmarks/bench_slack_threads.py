"""100 Slack threads at once against the real bot process (HTTP events in, Web API calls out to the fake Slack).

Each thread: a signed `app_mention` -> the question in the thread -> a reply in the thread -> the
plan in the thread. The model is scripted with 200 ms latency per turn (two turns a thread).
Prints ONE JSON line:

- ack_p99_ms: p99 time to answer an event request (Slack wants < 3 s; our target is <= 50 ms)
- bot_added_p99_ms: p99 time the bot adds beyond model time per thread: (question posted - mention
  sent) + (plan posted - reply sent) - model latency of both turns
- finished: threads whose plan arrived (all of them, or the run failed)

The bot runs as its own process (tests/slack_bot_process.py: the production runtime with a
scripted model), so the sender and the fake Slack do not share its event loop. Each thread
gets its own channel so that Slack's per-channel posting limit (about one message a
second, which the fake enforces) does not become what is measured; `--channels` changes that.

    python benchmarks/bench_slack_threads.py [--threads 100] [--latency-ms 200] [--channels 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from tests.fakes.slack_api import FakeSlack, SlackMessage
from tests.fakes.slack_events import SlackEvents
from tests.scripted_trip import DAYS
from tests.slack_support import SECRET, is_plan

ROOT = Path(__file__).resolve().parents[1]
ACK_TARGET_MS = 50  # p99 time to acknowledge an event request


def p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def wait_post(fake: FakeSlack, channel: str, thread: str, pred: object, within: float) -> SlackMessage:
    check = pred  # type: ignore[assignment]
    await fake.wait_for(lambda f: any(check(m) for m in f.bot_posts(channel, thread)), within)  # type: ignore[operator]
    return next(m for m in fake.bot_posts(channel, thread) if check(m))  # type: ignore[operator]


async def run(threads: int, latency_ms: float, channels: int, db_dir: str | None) -> dict[str, object]:
    names = [f"C{i:04d}" for i in range(channels)]
    fake = FakeSlack(channels={c: "channel" for c in names})
    await fake.start()
    acks: list[float] = []
    added: list[float] = []
    with tempfile.TemporaryDirectory(dir=db_dir) as tmp:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.slack_bot_process", "--db", str(Path(tmp) / "bot.sqlite3"),
            "--slack-api", fake.base_url, "--latency-ms", str(latency_ms), cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        ready = json.loads(await proc.stdout.readline())
        events = SlackEvents(ready["base_url"] + "/slack/events", SECRET, bot_user_id=fake.bot_user_id)
        # one warm-up delivery: the first request also makes Bolt call auth.test
        await events.url_verification("warm-up")

        async def one(i: int) -> None:
            channel = names[i % channels]
            msg = fake.user_message(channel, f"U{i:04d}", f"<@{fake.bot_user_id}> trip {i} from Beijing to Shanghai")
            sent = time.monotonic()
            d = await events.app_mention(msg)
            acks.append(d.seconds)
            question = await wait_post(fake, channel, msg.ts, lambda m: m.button_values(), 120)
            first = question.posted_at - sent
            reply = fake.user_message(channel, msg.user, DAYS[i % 2], thread_ts=msg.ts)
            replied = time.monotonic()
            d = await events.message(reply)
            acks.append(d.seconds)
            plan = await wait_post(fake, channel, msg.ts, is_plan, 120)
            added.append(first + plan.posted_at - replied - 2 * latency_ms / 1000)

        started = time.monotonic()
        results = await asyncio.gather(*(one(i) for i in range(threads)), return_exceptions=True)
        wall = time.monotonic() - started
        await events.aclose()
        proc.terminate()
        await proc.wait()
    failures = [repr(r) for r in results if isinstance(r, BaseException)]
    plans = sum(1 for c in names for m in fake.bot_posts(c) if is_plan(m))
    limited = sum(1 for c in fake.calls if c.status == 429)
    calls = len(fake.calls)
    await fake.close()
    return {
        "bench": "slack_threads", "threads": threads, "channels": channels, "model_latency_ms": latency_ms,
        "finished": plans, "failures": failures[:3],
        "ack_p50_ms": round(statistics.median(acks) * 1000, 1) if acks else None,
        "ack_p99_ms": round(p(acks, 0.99) * 1000, 1), "ack_target_ms": ACK_TARGET_MS,
        "bot_added_p50_ms": round(statistics.median(added) * 1000, 1) if added else None,
        "bot_added_p99_ms": round(p(added, 0.99) * 1000, 1),
        "wall_s": round(wall, 2), "slack_api_calls": calls, "slack_429s": limited,
        "db_dir": db_dir or tempfile.gettempdir(),
        # the table's status: every thread got its plan and events were acknowledged in time
        "ok": plans == threads and not failures and bool(acks) and p(acks, 0.99) * 1000 <= ACK_TARGET_MS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=100)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--channels", type=int, default=0, help="default: one channel per thread")
    parser.add_argument("--db-dir", default=None, help="where the bot's SQLite file lives (default: temp dir)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    result = asyncio.run(run(args.threads, args.latency_ms, args.channels or args.threads, args.db_dir))
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
