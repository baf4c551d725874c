"""A restart with 1,000 outbox rows that can never be delivered (the people blocked the bot).

The database holds 1,000 finished conversations whose answers are still in the outbox, each
for a Telegram chat that blocked the bot (the fake Bot API answers 403). The real runtime with
the real Telegram adapter (long polling the fake Bot API; the fake model in-process) starts on
it; the moment `Runtime.start()` begins, a new person writes. Measured: how long `start()`
takes, how long from its beginning until the new person has the bot's reply, and how long
until every dead row is marked failed (once each: a refusal is never retried).

    python benchmarks/bench_restart_backlog.py [--rows 1000]

Prints ONE JSON line. Target: the new chat's first reply within 2 s of the start.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, emit, guard_network

sys.path.insert(0, str(ROOT))

from adapters.runtime import build_runtime
from agent_core.schema import Message
from bot.store import SqliteStore
from bot.store.base import TurnStart
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.spine_support import make_llm, make_settings, make_tools, plain_prompt
from tests.telegram_support import has

TARGET_S = 2.0
NEW_CHAT = 424242


async def seed(db: Path, chat_ids: list[int]) -> None:
    store = SqliteStore(db)
    await store.open()
    try:
        body = '{"text": "An old plan.", "plan": null, "verdict": null, "lang": "en"}'
        for chat_id in chat_ids:
            key = f"telegram:{chat_id}:"
            inbox = await store.add_inbox("telegram", f"seed-{chat_id}", key, "{}")
            turn = TurnStart(key, inbox or 0, Message.user("plan it"), "en", "u1", "Ann", "plan it", None)
            session = await store.start_turn(turn)
            await store.finish_run(session.id, [Message.assistant("An old plan.")], outbox=[("answer", body)])
    finally:
        await store.close()


async def main(rows: int) -> None:
    guard_network()
    blocked = list(range(10_000, 10_000 + rows))
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        await seed(tmp / "bot.sqlite3", blocked)
        async with FakeOpenAI([reply("<answer>Hello, new friend.</answer>")], record=False) as llm, \
                FakeTelegram() as tg:
            for chat_id in blocked:
                tg.block(chat_id)
            settings = make_settings(tmp, telegram_bot_token=tg.token, telegram_api_base_url=tg.base_url, port=0,
                                     log_level="WARNING")
            runtime = build_runtime(settings, model=make_llm(llm.base_url), tools=make_tools(), prompt=plain_prompt,
                                    serve_http=False)
            begin = time.perf_counter()
            tg.send_text(NEW_CHAT, "hi")
            await runtime.start()
            started = time.perf_counter() - begin
            try:
                await tg.wait_for(has("Hello, new friend.", NEW_CHAT), within=30)
                first_reply = time.perf_counter() - begin
                async with asyncio.timeout(120):
                    while (await runtime.store.counts()).outbox_pending:
                        await asyncio.sleep(0.05)  # the rows are another component's: poll the store
                drained = time.perf_counter() - begin
                failed = (await runtime.store.counts()).outbox_failed
            finally:
                await runtime.stop()
            attempts = sum(1 for r in tg.requests if r.method == "sendmessage" and r.chat_id in set(blocked))
    emit({
        "bench": "restart_backlog", "undeliverable_rows": rows, "start_s": round(started, 3),
        "new_chat_first_reply_s": round(first_reply, 3), "backlog_drained_s": round(drained, 2),
        "rows_failed": failed, "send_attempts_to_blocked": attempts, "target_s": TARGET_S,
        "target_met": first_reply <= TARGET_S and failed == rows and attempts == rows,
    })


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    asyncio.run(main(parser.parse_args().rows))
