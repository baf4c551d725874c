"""The bot process is killed while a Slack question waits; a new process takes the answer and posts the plan."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from adapters.slack.mrkdwn import unescape
from tests.fakes import pace
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import SlackEvents
from tests.scripted_trip import DAYS, QUESTION_EN
from tests.slack_support import SECRET, is_plan

ROOT = Path(__file__).resolve().parents[1]


async def recorded_question(db: Path, within: float) -> str:
    async with asyncio.timeout(within):
        while True:
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
                row = conn.execute("SELECT posted_message_id FROM questions WHERE status = 'waiting'").fetchone()
            if row and row[0]:
                return str(row[0])
            await asyncio.sleep(0.02)


@asynccontextmanager
async def bot_process(db: Path, fake: FakeSlack) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.slack_bot_process", "--db", str(db), "--slack-api", fake.base_url,
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(20):
            line = await proc.stdout.readline()
        if not line:
            assert proc.stderr is not None
            raise AssertionError((await proc.stderr.read()).decode()[-3000:])
        yield proc, json.loads(line)["base_url"] + "/slack/events"
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.slow
async def test_killed_while_the_question_waits_then_answered_after_restart(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    async with FakeSlack(channels={"C1": "channel"}) as fake:
        msg = fake.user_message("C1", "U1", f"<@{fake.bot_user_id}> plan a trip to Shanghai")
        async with bot_process(db, fake) as (proc, url):
            events = SlackEvents(url, SECRET)
            assert (await events.app_mention(msg)).status == 200
            await fake.wait_for(lambda f: any(m.button_values() for m in f.bot_posts("C1", msg.ts)), 20)
            # kill once the bot has recorded the question's message id: a kill between Slack's answer
            # and that commit would (rightly) make the next process post the question again
            await recorded_question(db, within=10)
            await events.aclose()
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        question = next(m for m in fake.bot_posts("C1", msg.ts) if m.button_values())
        assert QUESTION_EN in unescape(question.text)
        posted_before = len(fake.bot_posts("C1", msg.ts))

        async with bot_process(db, fake) as (proc, url):
            events = SlackEvents(url, SECRET)
            reply = fake.user_message("C1", "U1", f"on {DAYS[1]} please", thread_ts=msg.ts)
            assert (await events.message(reply)).status == 200
            await fake.wait_for(lambda f: any(is_plan(m) for m in f.bot_posts("C1", msg.ts)), 20)
            await events.aclose()
            proc.send_signal(signal.SIGTERM)
            await proc.wait()
        posts = fake.bot_posts("C1", msg.ts)
        plan = next(m for m in posts if is_plan(m))
        assert f"trip on {DAYS[1]}" in plan.text
        # the question was not posted again by the new process
        assert sum(1 for m in posts if m.button_values()) == 1
        assert len(posts) > posted_before


@asynccontextmanager
async def bot_py(tmp: Path, fake: FakeSlack, llm_url: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """`python bot.py` with Slack configured: the real entry point."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SLACK_", "BOT_", "OPENAI_"))},
        "PYTHONPATH": str(ROOT), "SLACK_BOT_TOKEN": fake.bot_token, "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_BASE_URL": fake.base_url, "OPENAI_BASE_URL": llm_url, "OPENAI_API_KEY": "sk-test",
        "BOT_DB_PATH": str(tmp / "bot.sqlite3"), "BOT_PORT": "0", "BOT_VALIDATE": "off", "BOT_LOG_LEVEL": "WARNING",
        **pace.passed_on(),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "bot.py"), cwd=tmp, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=(tmp / "bot.log").open("ab"),
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(30):
            while True:
                line = (await proc.stdout.readline()).decode()
                if not line:
                    raise AssertionError((tmp / "bot.log").read_text()[-3000:])
                found = re.search(r"(http://127\.0\.0\.1:\d+)", line)
                if found:
                    break
        yield proc, found.group(1) + "/slack/events"
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.slow
async def test_bot_py_killed_while_the_question_waits_then_a_button_answers(tmp_path: Path) -> None:
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave for Shanghai?",
                                             "options": ["Friday", "Saturday"]}, id="call_day")]),
        reply("<answer>Your plan: leave Saturday on G1.</answer>"),
    ]
    async with FakeOpenAI(script) as llm, FakeSlack(channels={"C1": "channel"}) as fake:
        msg = fake.user_message("C1", "U1", f"<@{fake.bot_user_id}> plan a weekend in Shanghai")
        async with bot_py(tmp_path, fake, llm.base_url) as (proc, url):
            events = SlackEvents(url, SECRET)
            assert (await events.app_mention(msg)).status == 200
            await fake.wait_for(lambda f: any(m.button_values() for m in f.bot_posts("C1", msg.ts)), 30)
            await recorded_question(tmp_path / "bot.sqlite3", within=10)
            await events.aclose()
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        question = next(m for m in fake.bot_posts("C1", msg.ts) if m.button_values())
        assert question.button_values() == ["Friday", "Saturday"]

        async with bot_py(tmp_path, fake, llm.base_url) as (proc, url):
            events = SlackEvents(url, SECRET)
            assert (await events.block_action(question, user="U1", value="Saturday")).status == 200
            await fake.wait_for(lambda f: any("leave Saturday on G1" in m.text
                                              for m in f.bot_posts("C1", msg.ts)), 30)
            await events.aclose()
        posts = fake.bot_posts("C1", msg.ts)
        # the question was posted once: counted as posted, since its message may be edited after
        # the press, and the run's status message may name the ask_human call too
        asked = [c for c in fake.calls_of("chat.postMessage") if c.status == 200 and c.error is None
                 and "❓" in str(c.args.get("text", "")) and "Which day do you leave" in str(c.args.get("text", ""))]
        assert len(asked) == 1, [m.text for m in posts]
        assert llm.requests[-1].tool_results()["call_day"] == "@u1: Saturday"  # a channel: who answered
        llm.assert_complete()
