"""Who is woken when an update is stored (PostgreSQL, two runtimes on one database).

Two runtimes in one test stand for two bot processes: each has its own store, pool, leases and
LISTEN connection. A NOTIFY is not free (PostgreSQL lets one notifying transaction commit at a
time), so an update stored by the process that runs its chat wakes nobody; one stored by the
other process, which finds the chat held, wakes the holder, and the holder goes on with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from adapters.runtime import Runtime
from bot.store.postgres.notify import INBOX_CHANNEL
from bot.surface import ChatKey, SubmitOutcome
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.spine_support import RecordingSurface, make_llm, make_settings, msg, start_runtime

CHAT = ChatKey("test", "wake1")


@asynccontextmanager
async def heard_notifies(url: str) -> AsyncIterator[list[str]]:
    """The chat keys NOTIFYed on the inbox channel while the block runs."""
    heard: list[str] = []
    conn = await asyncpg.connect(url)
    await conn.add_listener(INBOX_CHANNEL, lambda _c, _pid, _ch, payload: heard.append(payload))
    try:
        yield heard
    finally:
        await conn.close()


@asynccontextmanager
async def process(url: str, tmp: Path, llm_url: str, name: str) -> AsyncIterator[tuple[Runtime, RecordingSurface]]:
    surface = RecordingSurface()
    llm = make_llm(llm_url)
    runtime = await start_runtime(make_settings(tmp / name, db_url=url, lease_s=15), llm, surface)
    try:
        yield runtime, surface
    finally:
        await runtime.stop()
        await llm.aclose()


async def flushed(url: str, heard: list[str]) -> list[str]:
    """Every NOTIFY sent so far has reached `heard`: a NOTIFY of our own, sent last, has."""
    async with heard_notifies(url) as own:  # (a second listener, to see our marker arrive)
        marker = await asyncpg.connect(url)
        try:
            await marker.execute("SELECT pg_notify($1, 'marker')", INBOX_CHANNEL)
        finally:
            await marker.close()
        async with asyncio.timeout(5):
            while "marker" not in heard or "marker" not in own:
                await asyncio.sleep(0.01)
    return [k for k in heard if k != "marker"]


async def test_an_update_wakes_another_process_only_when_that_one_holds_the_chat(pg_url: str, tmp_path: Path) -> None:
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Which day?"}, id="c1")]), reply("Go on Friday.")]
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    async with FakeOpenAI(script) as fake, heard_notifies(pg_url) as heard, \
            process(pg_url, tmp_path, fake.base_url, "a") as (a, surface_a), \
            process(pg_url, tmp_path, fake.base_url, "b") as (b, surface_b):
        assert await a.manager.submit(msg(CHAT, "Plan a trip", dedup="m1")) is SubmitOutcome.ACCEPTED
        await surface_a.wait_count("question", 1)
        assert await flushed(pg_url, heard) == []  # stored where the chat runs: nobody else woken

        # the answer reaches the other process (a load balancer's choice): its claim finds the
        # chat held, so it wakes the holder, which resumes the run and posts the plan
        assert await b.manager.submit(msg(CHAT, "Friday", dedup="m2")) is SubmitOutcome.ACCEPTED
        await surface_a.wait_count("answer", 1)
        assert surface_b.of("answer") == [] and surface_b.of("question") == []
        assert await flushed(pg_url, heard) == [str(CHAT)]
        fake.assert_complete()
