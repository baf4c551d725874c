"""`python bot.py chat` against an OpenAI-compatible endpoint: a question, an answer, a reply."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, call, reply

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


async def read_until(stream: asyncio.StreamReader, text: str, seen: list[str], within: float = 30) -> None:
    async with asyncio.timeout(within):
        while not any(text in line for line in seen):
            line = await stream.readline()
            if not line:
                raise AssertionError(f"bot.py exited before printing {text!r}; it printed: {seen}")
            seen.append(line.decode())


@pytest.mark.parametrize("stream", ["true", "false"])
async def test_bot_py_chat_with_an_llm_asks_and_answers(tmp_path, stream):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which day do you want to leave?"}, id="call_day")]),
        reply(tool_calls=[call("train_search", {"depart_station": "北京", "arrive_station": "上海",
                                                "depart_date": "2030-05-10", "is_transfer": 0}, id="call_t")]),
        reply("<answer>Take a morning G train on 2030-05-10.</answer>"),
    ]
    async with FakeOpenAI(script) as fake:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BOT_", "TELEGRAM_", "SLACK_"))}
        env.update({"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake.base_url, "BOT_DB_PATH": str(tmp_path / "b.db"),
                    "BOT_VALIDATE": "off", "PYTHONUNBUFFERED": "1", "BOT_LLM_STREAM": stream})
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "bot.py", "chat", cwd=ROOT, env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        seen: list[str] = []
        try:
            proc.stdin.write(b"Beijing to Shanghai by train\n")
            await proc.stdin.drain()
            await read_until(proc.stdout, "? Which day do you want to leave?", seen)
            proc.stdin.write(b"May 10\n")
            await proc.stdin.drain()
            await read_until(proc.stdout, "Take a morning G train on 2030-05-10.", seen)
        finally:
            proc.stdin.close()
            async with asyncio.timeout(20):
                await proc.wait()
        fake.assert_complete()
        assert all(bool(r.body.get("stream")) is (stream == "true") for r in fake.requests)
        assert fake.requests[1].tool_results() == {"call_day": "May 10"}
        results = fake.requests[2].tool_results()
        assert '"source": "sandbox"' in results["call_t"] or '"source":"sandbox"' in results["call_t"]
