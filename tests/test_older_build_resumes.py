"""A conversation paused by an older build resumes on this one: the answer binds, the run ends.

The databases in tests/fixtures/paused_5b0c550/ were written by the code of an earlier commit (its
README says which and how): two Telegram chats paused on a question, one posted, one whose posting
the Bot API kept refusing; the bot stopped. Here the current code starts on each (applying the
migrations since): the posted question is not posted again and its answer binds; the other is
posted now and its answer binds; each run resumes with its answer and finishes.
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.store.migrate import MIGRATIONS_DIR, discover
from bot.store.postgres.migrate import PG_MIGRATIONS_DIR
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.pg_support import fresh_database
from tests.telegram_support import containing, has, telegram_bot

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "paused_5b0c550"
CHAT, UNPOSTED = 8080, 8081  # the chats the older build paused: its question posted, and not
PLAN = "Your plan: Suzhou from Friday."
WUXI = "Your plan: Wuxi on Saturday."
# The older build's deadline was an hour after it asked, on the day the fixture was made: moved
# to an hour from now, as if the person answered within the hour.
DEADLINE = "UPDATE questions SET deadline = {now} + 3600 WHERE status = 'waiting'"


@contextlib.asynccontextmanager
async def older_database(kind: str, tmp: Path) -> AsyncIterator[tuple[dict[str, Any], Any]]:
    """The fixture's database, as the older build left it; yields the settings that name it and
    a function reading rows from it."""
    dump = (FIXTURE / f"{kind}.sql").read_text(encoding="utf-8")
    if kind == "sqlite":
        path = tmp / "bot.sqlite3"
        with contextlib.closing(sqlite3.connect(path)) as conn:
            conn.executescript(dump)
            conn.execute(DEADLINE.format(now=time.time()))
            conn.commit()

        async def sqlite_rows(sql: str) -> list[tuple[Any, ...]]:
            with contextlib.closing(sqlite3.connect(path)) as conn:
                return conn.execute(sql).fetchall()

        yield {}, sqlite_rows
        return
    async with fresh_database(migrated=False) as url:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(dump)  # its own session settings (search_path ''), on a connection of its own
        finally:
            await conn.close()

        async def pg_rows(sql: str) -> list[tuple[Any, ...]]:
            conn = await asyncpg.connect(url)
            try:
                return [tuple(r) for r in await conn.fetch(sql)]
            finally:
                await conn.close()

        await pg_rows(DEADLINE.format(now=time.time()))
        yield {"db_url": url}, pg_rows


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_conversation_paused_by_an_older_build_resumes_on_this_one(tmp_path, kind):
    async with older_database(kind, tmp_path) as (settings, rows):
        assert await rows("SELECT state FROM sessions") == [("asking",), ("asking",)]
        script = [reply(f"<answer>{PLAN}</answer>"), reply(f"<answer>{WUXI}</answer>")]
        async with FakeOpenAI(script) as llm, FakeTelegram() as tg:
            # Telegram's update ids only grow; this fake starts where the older build's fake
            # started, and the inbox would take its first update for the one already stored
            tg._update_ids = itertools.count(800_000)
            tg._chat(UNPOSTED)  # the person wrote there to the older build: Telegram knows the chat
            async with telegram_bot(tmp_path, tg, llm.base_url, **settings):
                tg.send_text(CHAT, "Friday")
                await tg.wait_for(has(PLAN, CHAT), within=30)
                assert llm.requests[-1].tool_results() == {"call_old_build": "Friday"}  # the older build's call
                await tg.wait_for(has("Which day do you leave for Wuxi?", UNPOSTED), within=30)
                tg.send_text(UNPOSTED, "Saturday")
                await tg.wait_for(has(WUXI, UNPOSTED), within=30)
                assert llm.requests[-1].tool_results() == {"call_old_unposted": "Saturday"}
            assert len(containing(tg, CHAT, PLAN)) == 1 and len(containing(tg, UNPOSTED, WUXI)) == 1
            assert not containing(tg, CHAT, "Which day")  # posted by the older build: not again
            assert len(containing(tg, UNPOSTED, "Which day")) == 1
            llm.assert_complete()
            assert tg.violations == []
        expected = [m.version for m in discover(MIGRATIONS_DIR if kind == "sqlite" else PG_MIGRATIONS_DIR)]
        assert [v for (v,) in await rows("SELECT version FROM schema_version ORDER BY version")] == expected
        assert await rows("SELECT status FROM questions") == [("answered",), ("answered",)]
        assert await rows("SELECT state FROM sessions") == [("idle",), ("idle",)]
