"""A question the platform took, the bot killed before the posting was recorded: the answer binds.

The bot is `python bot.py` (SQLite, or PostgreSQL through BOT_DB_URL); the fake Bot API and the
fake model live in this test process and outlive it. The fake takes the question (the person
sees it) and holds its HTTP answer, so the bot is SIGKILLed after the platform took the question
and before `outbox_sent` recorded the posting. The person answers (while that bot still runs, or
while none does); a new process re-posts the question (delivery is at least once) and must bind
the answer to it and resume the run with it. The watermark must stay where it was before the
first posting: nothing said before it may bind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.fakes import pace
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.pg_support import fresh_database
from tests.telegram_support import containing, has

REPO = Path(__file__).resolve().parent.parent
CHAT = 7070
QUESTION = "Which day do you leave for Hangzhou?"
PLAN = "Your plan: leave Friday on G7."

pytestmark = pytest.mark.slow


class HoldingTelegram(FakeTelegram):
    """Takes every posting of the question into the chat, then answers the bot only on release."""

    def __init__(self) -> None:
        super().__init__()
        self.held = 0
        self.released = asyncio.Event()

    async def _m_sendmessage(self, p: dict[str, Any]) -> dict[str, Any]:
        result = await super()._m_sendmessage(p)
        if QUESTION in str(result.get("text", "")) and not self.released.is_set():
            self.held += 1
            self._notify()
            await self.released.wait()
        return result


@dataclass
class Db:
    """The bot's database, read from this process."""

    env: dict[str, str]
    path: Path | None = None
    url: str | None = None

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self.path is not None:
            with contextlib.closing(sqlite3.connect(self.path)) as conn:
                return conn.execute(sql).fetchall()
        conn = await asyncpg.connect(self.url)
        try:
            return [tuple(r) for r in await conn.fetch(sql)]
        finally:
            await conn.close()

    async def until(self, sql: str, within: float = 30) -> list[tuple[Any, ...]]:
        """The rows of `sql` once there are any (another process writes them: nothing to wait on
        but the database)."""
        async with asyncio.timeout(within):
            while not (found := await self.rows(sql)):
                await asyncio.sleep(0.02)
        return found


@contextlib.asynccontextmanager
async def database(kind: str, tmp: Path) -> AsyncIterator[Db]:
    if kind == "sqlite":
        path = tmp / "bot.sqlite3"
        yield Db({"BOT_DB_PATH": str(path)}, path=path)
        return
    async with fresh_database() as url:
        # a lease of 2 s: the killed process's chat is taken over within a few seconds
        yield Db({"BOT_DB_URL": url, "BOT_LEASE_S": "2", "BOT_DB_POOL_MAX": "6"}, url=url)


async def _start_bot(tmp: Path, tg: FakeTelegram, llm: FakeOpenAI, db: Db) -> asyncio.subprocess.Process:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SLACK_", "BOT_", "OPENAI_"))},
        "PYTHONPATH": str(REPO), "TELEGRAM_BOT_TOKEN": tg.token, "TELEGRAM_API_BASE_URL": tg.base_url,
        "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "sk-test", "BOT_PORT": "0", "BOT_VALIDATE": "off",
        "BOT_LOG_LEVEL": "WARNING", **db.env, **pace.passed_on(),
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, str(REPO / "bot.py"), cwd=tmp, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=(tmp / "bot.log").open("ab"),
    )


async def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()


async def _until(tg: FakeTelegram, bot: asyncio.subprocess.Process, predicate: Any, log: Path) -> None:
    """Wait for `predicate(tg)`; fail at once, with the bot's log, if the bot dies."""
    seen = asyncio.ensure_future(tg.wait_for(predicate, within=40))
    died = asyncio.ensure_future(bot.wait())
    await asyncio.wait({seen, died}, return_when=asyncio.FIRST_COMPLETED)
    if not seen.done():
        seen.cancel()
        tail = await asyncio.to_thread(log.read_text)
        raise AssertionError(f"bot.py exited with {bot.returncode}:\n{tail[-3000:]}")
    died.cancel()
    seen.result()


@pytest.mark.parametrize("answered", ["before the kill", "while no bot runs"])
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_an_answer_to_a_question_posted_but_not_recorded_binds_after_a_restart(tmp_path, kind, answered):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": QUESTION}, id="call_day")]),
        reply(f"<answer>{PLAN}</answer>"),
    ]
    log = tmp_path / "bot.log"
    tg = HoldingTelegram()
    async with database(kind, tmp_path) as db, FakeOpenAI(script) as llm, tg:
        bot = await _start_bot(tmp_path, tg, llm, db)
        try:
            tg.send_text(CHAT, "Plan two days in Hangzhou")
            await _until(tg, bot, lambda t: t.held >= 1, log)  # in the chat; the bot not told yet
            [(said_before,)] = await db.rows("SELECT MAX(id) FROM inbox")  # everything said before it
            assert await db.rows("SELECT posted_after FROM questions") == [(None,)]  # not recorded
            if answered == "before the kill":
                tg.send_text(CHAT, "Friday")
                await db.until("SELECT id FROM inbox WHERE body LIKE '%Friday%'")  # stored, then killed
            await _kill(bot)
            if answered == "while no bot runs":
                tg.send_text(CHAT, "Friday")

            bot = await _start_bot(tmp_path, tg, llm, db)
            [(answer_id,)] = await db.until("SELECT id FROM inbox WHERE body LIKE '%Friday%'")
            await _until(tg, bot, lambda t: t.held >= 2, log)  # the re-post, held until the answer is in
            tg.released.set()
            await _until(tg, bot, has(PLAN, CHAT), log)
        finally:
            tg.released.set()
            await _kill(bot)
        [(posted_after, first_post_after, status)] = await db.rows(
            "SELECT posted_after, first_post_after, status FROM questions")
        assert llm.requests[-1].tool_results()["call_day"] == "Friday"  # the run resumed with the answer
        assert status == "answered"
        # the watermark of the first posting, kept by the re-post: nothing said before it binds
        assert posted_after == first_post_after == said_before < answer_id
        assert len(containing(tg, CHAT, QUESTION)) == 2  # posted again: delivery is at least once
        assert len(containing(tg, CHAT, PLAN)) == 1
        llm.assert_complete()
        assert tg.violations == []
