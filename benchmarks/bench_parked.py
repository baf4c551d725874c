"""Parked sessions: RSS growth of our runtime for 10,000 conversations waiting for an answer.

The real runtime (build_runtime: SqliteStore + SessionManager + ToolCallAgent + LLM) talks to
the fake model process; BOT_PARK_AFTER_S=0, so a run that has posted its question parks at
once (no coroutine, no agent held; re-driven from the store when the answer comes). Every
waiting conversation goes through the real flow: request -> model asks -> pause stored ->
question posted -> parked. RSS is read after a warm-up of 200 parked conversations and again
after N more; the figure is the growth divided by N. Then one parked conversation is answered
to show it resumes.

    python benchmarks/bench_parked.py [--sessions 10000] [--batch 100]

Prints ONE JSON line. Target: <= 1 KB per parked conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ANSWER, FINAL, emit, guard_network, rss_bytes
from _fake_model import FakeModelProcess
from _runtimes import OursDriver

TARGET_BYTES = 1024
WARMUP = 200


async def park(driver: OursDriver, prefix: str, n: int, batch: int) -> None:
    for first in range(0, n, batch):
        keys = [f"{prefix}{i}" for i in range(first, min(n, first + batch))]
        await asyncio.gather(*(driver.ask(k) for k in keys))


async def settled(driver: OursDriver, prefix: str, n: int, timeout: float = 120) -> int:
    """Wait until the runtime holds nothing for the paused chats; return how many are parked."""
    from bot.surface import ChatKey

    manager = driver.runtime.manager
    async with asyncio.timeout(timeout):
        while True:
            await manager.wait_until_idle(ChatKey("bench", f"{prefix}{n - 1}"), timeout)
            parked = 0
            for i in range(0, n, max(1, n // 200)):  # a sample: reading 10,000 sessions costs RSS too
                info = await manager.session_info(ChatKey("bench", f"{prefix}{i}"))
                parked += info is not None and info.state == "parked"
            if parked == len(range(0, n, max(1, n // 200))):
                return n
            await asyncio.sleep(0.05)


async def run(base_url: str, db: Path, sessions: int, batch: int) -> dict[str, Any]:
    driver = OursDriver(base_url, db)
    await driver.open()
    try:
        await park(driver, "warm-", WARMUP, batch)
        await settled(driver, "warm-", WARMUP)
        before = rss_bytes()
        started = time.monotonic()
        await park(driver, "p-", sessions, batch)
        park_s = time.monotonic() - started
        await settled(driver, "p-", sessions)
        after = rss_bytes()
        t = time.monotonic()
        final = await asyncio.wait_for(driver.reply("p-0", ANSWER), 30)
        resume_s = time.monotonic() - t
        questions = driver.surface.questions
    finally:
        await driver.close()
    per = (after - before) / sessions
    return {
        "bench": "parked",
        "parked": sessions,
        "rss_before_mb": round(before / 2**20, 1),
        "rss_after_mb": round(after / 2**20, 1),
        "rss_per_parked_bytes": round(per),
        "target_bytes": TARGET_BYTES,
        "questions_posted": questions,
        "park_rate_per_s": round(sessions / park_s, 1),
        "parked_resume_ok": final == FINAL,
        "parked_answer_to_final_ms": round(resume_s * 1000, 2),
        "ok": per <= TARGET_BYTES and final == FINAL and questions == sessions + WARMUP,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    guard_network()
    with FakeModelProcess() as fm, tempfile.TemporaryDirectory(prefix="bench-parked-") as tmp:
        line = asyncio.run(run(fm.base_url, Path(tmp) / "bot.sqlite3", args.sessions, args.batch))
    emit(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
