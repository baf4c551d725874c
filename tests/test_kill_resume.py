"""Kill-and-resume: the bot process is SIGKILLed at the worst moments and restarted.

The model is the fake OpenAI server in this test process (it outlives the bot); the bot is
`python -m tests.spine_bot` (the real runtime on the console surface) in a subprocess.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, call, reply

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


class BotProcess:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.lines: list[str] = []
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    async def start(self) -> BotProcess:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.spine_bot", cwd=ROOT, env=self.env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
        self._reader = asyncio.create_task(self._read())
        await self.wait_line("[ready]")
        return self

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.lines.append(line.decode().rstrip("\n").removeprefix("> "))
            self._changed.set()

    async def wait_line(self, text: str, timeout: float = 20) -> None:
        async with asyncio.timeout(timeout):
            while not any(text in line for line in self.lines):
                self._changed.clear()
                await self._changed.wait()

    async def send(self, line: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write((line + "\n").encode())
        await self.proc.stdin.drain()

    async def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        if self._reader is not None:
            await self._reader

    async def close(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            try:
                async with asyncio.timeout(10):
                    await self.proc.wait()
            except TimeoutError:
                await self.kill()


def bot_env(tmp_path: Path, base_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BOT_", "TELEGRAM_", "SLACK_"))}
    env.update({
        "BOT_DB_PATH": str(tmp_path / "bot.sqlite3"), "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test",
        "SPINE_WORKDIR": str(tmp_path), "BOT_VALIDATE": "off", "PYTHONUNBUFFERED": "1",
    })
    env.update(extra)
    return env


def count(lines: list[str], text: str) -> int:
    return sum(1 for line in lines if text in line)


def db_rows(tmp_path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(tmp_path / "bot.sqlite3") as conn:
        return conn.execute(sql).fetchall()


async def wait_posted(tmp_path: Path) -> None:
    """Posting and recording the message id are two steps; a kill between them is the one window."""
    async with asyncio.timeout(10):
        while not db_rows(tmp_path, "SELECT 1 FROM questions WHERE posted_message_id IS NOT NULL"):
            await asyncio.sleep(0.01)


async def test_kill_while_the_question_waits(tmp_path):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which date do you travel?"}, id="ask_k1")]),
        reply("<answer>Booked for the 5th.</answer>"),
    ]
    async with FakeOpenAI(script) as fake:
        env = bot_env(tmp_path, fake.base_url)
        first = await BotProcess(env).start()
        await first.send("plan a trip")
        await first.wait_line("? Which date do you travel?")
        await wait_posted(tmp_path)
        await first.kill()
        second = await BotProcess(env).start()
        await second.send("the 5th")
        await second.wait_line("Booked for the 5th.")
        await second.close()
        lines = first.lines + second.lines
        assert count(lines, "? Which date do you travel?") == 1  # posted once, not again on restart
        assert count(lines, "Booked for the 5th.") == 1
        assert fake.requests[-1].tool_results() == {"ask_k1": "the 5th"}
        fake.assert_complete()


async def test_kill_while_the_model_works_on_the_first_step(tmp_path):
    """The run starts once its message's turn is committed: a kill while the model is asked the
    first time finds the turn stored, and the restarted bot runs it; the person hears one answer."""
    async with FakeOpenAI() as fake:
        gate = fake.gate("first-step")
        fake.add(reply("<answer>Beijing in four days.</answer>", gate=gate))  # held until the kill
        env = bot_env(tmp_path, fake.base_url)
        first = await BotProcess(env).start()
        await first.send("plan Beijing")
        await fake.wait_for_requests(1, within=20)
        assert db_rows(tmp_path, "SELECT status FROM inbox") == [("done",)]
        assert db_rows(tmp_path, "SELECT state FROM sessions") == [("working",)]
        assert len(db_rows(tmp_path, "SELECT 1 FROM messages WHERE body LIKE '%plan Beijing%'")) == 1
        await first.kill()
        second = await BotProcess(env).start()
        await fake.wait_for_requests(2, within=20)  # the turn put back when the first bot went away
        gate.set()
        await second.wait_line("Beijing in four days.")
        await second.close()
        assert count(first.lines + second.lines, "Beijing in four days.") == 1
        assert len(db_rows(tmp_path, "SELECT 1 FROM messages WHERE body LIKE '%plan Beijing%'")) == 1
        fake.assert_complete()


async def test_kill_between_the_model_reply_and_its_tool_results(tmp_path):
    script = [
        reply(tool_calls=[call("wait_file", {"tag": "t1"}, id="slow1")]),
        reply("<answer>All done after waiting.</answer>"),
    ]
    async with FakeOpenAI(script) as fake:
        env = bot_env(tmp_path, fake.base_url)
        first = await BotProcess(env).start()
        await first.send("do the slow thing")
        started = tmp_path / "started-t1"
        async with asyncio.timeout(20):
            while not started.exists():
                await asyncio.sleep(0.02)
        await first.kill()
        # the model's reply was stored before the tool ran: it is not asked again
        assert len(fake.requests) == 1
        second = await BotProcess(env).start()
        async with asyncio.timeout(20):
            while started.read_text() != "2":  # the interrupted tool call runs again after restart
                await asyncio.sleep(0.02)
        (tmp_path / "release-t1").write_text("go")
        await second.wait_line("All done after waiting.")
        await second.close()
        assert count(first.lines + second.lines, "All done after waiting.") == 1
        assert len(fake.requests) == 2
        fake.assert_complete()


async def test_kill_right_after_the_answer_is_stored(tmp_path):
    async with FakeOpenAI() as fake:
        gate = fake.gate("after-answer")
        fake.add(
            reply(tool_calls=[call("ask_human", {"inquire": "Budget?"}, id="ask_b")]),
            reply("<answer>Within 3000.</answer>", gate=gate),
        )
        env = bot_env(tmp_path, fake.base_url)
        first = await BotProcess(env).start()
        await first.send("plan")
        await first.wait_line("? Budget?")
        await first.send("3000 yuan")
        # the model is asked again only once the answer is committed
        await fake.wait_for_requests(2, within=20)
        assert db_rows(tmp_path, "SELECT status FROM questions") == [("answered",)]
        await first.kill()
        second = await BotProcess(env).start()
        await fake.wait_for(lambda f: sum(1 for r in f.requests if r.outcome is None) >= 1 or len(f.requests) >= 3, within=20)
        gate.set()
        await second.wait_line("Within 3000.")
        await second.close()
        lines = first.lines + second.lines
        assert count(lines, "Within 3000.") == 1
        assert count(lines, "? Budget?") == 1
        assert fake.requests[-1].tool_results() == {"ask_b": "3000 yuan"}  # nothing the person said is lost
        fake.assert_complete()


async def test_a_deadline_expires_across_a_restart(tmp_path):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Hotel stars?"}, id="ask_d")]),
        reply("<answer>Picked a 4-star hotel.</answer>"),
    ]
    async with FakeOpenAI(script) as fake:
        env = bot_env(tmp_path, fake.base_url, BOT_HUMAN_TIMEOUT_S="1.5")
        first = await BotProcess(env).start()
        await first.send("hotel")
        await first.wait_line("? Hotel stars?")
        await wait_posted(tmp_path)
        await first.kill()
        deadline = float(str(db_rows(tmp_path, "SELECT deadline FROM questions")[0][0]))
        await asyncio.sleep(max(0.0, deadline - time.time()) + 0.1)  # the deadline passes while the bot is down
        second = await BotProcess(env).start()
        await second.wait_line("Picked a 4-star hotel.")
        await second.close()
        assert "did not answer" in fake.requests[-1].tool_results()["ask_d"]
        fake.assert_complete()
