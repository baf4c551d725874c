"""The bot process is SIGKILLed while its question waits, restarted, and then answered: the plan
arrives and the question was posted once. `python bot.py` is the real entry point; the fake Bot
API and the fake model live in this test process, so they outlive the bot."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from bot.store import SqliteStore
from tests.fakes import pace
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram_support import containing, has

REPO = Path(__file__).resolve().parent.parent
CHAT = 6060

pytestmark = pytest.mark.slow


async def _start_bot(tmp: Path, tg: FakeTelegram, llm: FakeOpenAI) -> asyncio.subprocess.Process:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SLACK_", "BOT_", "OPENAI_"))},
        "PYTHONPATH": str(REPO), "TELEGRAM_BOT_TOKEN": tg.token, "TELEGRAM_API_BASE_URL": tg.base_url,
        "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "sk-test", "BOT_DB_PATH": str(tmp / "bot.sqlite3"),
        "BOT_PORT": "0", "BOT_VALIDATE": "off", "BOT_LOG_LEVEL": "WARNING", **pace.passed_on(),
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, str(REPO / "bot.py"), cwd=tmp, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=(tmp / "bot.log").open("ab"),
    )


async def _wait(tg: FakeTelegram, bot: asyncio.subprocess.Process, needle: str, log: Path) -> None:
    """Wait for a bot message containing `needle`; fail at once, with the bot's log, if it dies."""
    seen = asyncio.ensure_future(tg.wait_for(has(needle, CHAT), within=30))
    died = asyncio.ensure_future(bot.wait())
    await asyncio.wait({seen, died}, return_when=asyncio.FIRST_COMPLETED)
    if not seen.done():
        seen.cancel()
        tail = await asyncio.to_thread(log.read_text)
        raise AssertionError(f"bot.py exited with {bot.returncode}:\n{tail[-3000:]}")
    died.cancel()
    seen.result()


async def _question_recorded(db: Path, within: float = 10.0) -> None:
    """The bot has stored the question's Telegram message id: from here on a restart must not
    post it again. (Killed between sending and storing, a repost is the documented outcome.)"""
    store = SqliteStore(db)
    await store.open()
    try:
        async with asyncio.timeout(within):
            while not any(q.posted_message_id for q in await store.waiting_questions()):
                await asyncio.sleep(0.02)  # another process writes it: nothing to wait on but the file
    finally:
        await store.close()


async def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()


async def test_sigkill_while_the_question_waits_then_restart_and_answer(tmp_path):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave for Shanghai?"}, id="call_day")]),
        reply("<answer>Your plan: leave Friday on G1.</answer>"),
    ]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg:
        bot = await _start_bot(tmp_path, tg, llm)
        try:
            tg.send_text(CHAT, "Plan a weekend in Shanghai")
            await _wait(tg, bot, "Which day do you leave for Shanghai?", tmp_path / "bot.log")
            await _question_recorded(tmp_path / "bot.sqlite3")
            await _kill(bot)

            tg.send_text(CHAT, "Friday")  # arrives while no bot is running
            bot = await _start_bot(tmp_path, tg, llm)
            await _wait(tg, bot, "Your plan: leave Friday on G1.", tmp_path / "bot.log")
        finally:
            await _kill(bot)
        assert len(containing(tg, CHAT, "Which day do you leave for Shanghai?")) == 1, [(m.message_id, m.text) for m in tg.bot_messages(CHAT)]
        assert len(containing(tg, CHAT, "Your plan: leave Friday on G1.")) == 1
        assert llm.requests[-1].tool_results()["call_day"] == "Friday"
        llm.assert_complete()
        assert tg.violations == []
