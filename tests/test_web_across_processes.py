"""The web page's event stream on one process while another runs the chat (PostgreSQL).

Two `python bot.py` processes on one database. The page posts its message to one; the run (its
model call held) belongs to whichever took the chat's lease; the page's event stream is opened
on the other. The run's question, its answer and its end reach that stream through the database
and NOTIFY; a reconnect to the same process with Last-Event-ID replays what it missed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from tests.bot_cluster import BotProcess, cluster_env, owners, until
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.pg_support import fresh_database
from tests.web_sse import SseReader

pytestmark = pytest.mark.slow


async def test_events_of_a_chat_run_elsewhere_reach_the_stream_with_replay(tmp_path: Path) -> None:
    async with fresh_database() as db, FakeOpenAI() as llm:
        asking, planning = asyncio.Event(), asyncio.Event()
        llm.add(reply(tool_calls=[call("ask_human", {"inquire": "Which day for web1?"}, id="ask_w")], gate=asking),
                reply("<answer>Plan for web1: the old town.</answer>", gate=planning), key="web1")
        env = cluster_env(db, llm.base_url)
        a, b = await asyncio.gather(BotProcess.start(tmp_path, "a", env), BotProcess.start(tmp_path, "b", env))
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                res = await http.post(a.url + "/api/chat", json={"message": "Plan a trip [conv:web1]"})
                assert res.status_code == 200, res.text
                sid = res.json()["session_id"]
                key = f"web:{sid}:"

                async def owned() -> bool:
                    return key in await owners(db)

                await until(owned, 10, "a process took the chat")
                runner = a if (await owners(db))[key] == a.pid else b
                other = b if runner is a else a
                async with http.stream("GET", f"{other.url}/api/sessions/{sid}/events") as stream:
                    reader = SseReader(stream)
                    asking.set()
                    question = await reader.until("human_input_request", within=15)
                    assert "Which day for web1?" in question.data
                seen = question.id
                assert seen is not None

                res = await http.post(other.url + "/api/human_response",
                                      json={"session_id": sid, "response": "Friday"})
                assert res.status_code == 200, res.text
                planning.set()
                # the page was away meanwhile; it comes back to the same process with Last-Event-ID
                async def done() -> bool:
                    view = (await http.get(f"{other.url}/api/sessions/{sid}")).json()
                    return any("Plan for web1" in (e.get("text") or "") for e in view["entries"])

                await until(done, 15, "the plan is stored")
                async with http.stream("GET", f"{other.url}/api/sessions/{sid}/events",
                                       headers={"Last-Event-ID": seen}) as stream:
                    reader = SseReader(stream)
                    answer = await reader.until("answer", within=15)
                    assert "Plan for web1: the old town." in answer.data
                    assert "reset" not in [e.event for e in reader.seen]  # replayed, not rebuilt
        finally:
            for bot in (a, b):
                await bot.stop()
        assert llm.served("web1")[-1].tool_results() == {"ask_w": "Friday"}
        llm.assert_complete()
