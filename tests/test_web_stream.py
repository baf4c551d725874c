"""The web chat streams the answer as `delta` events (replayable with Last-Event-ID like the
others) and stops a run with `POST /api/sessions/{id}/stop`, over real HTTP, with the LLM client
streaming from the fake OpenAI server."""

from __future__ import annotations

import asyncio

import httpx

from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.web_runtime import web_stack
from tests.web_sse import SseReader

TEXT = "Day 1: take the G1 at 09:00 to Shanghai, check in near the Bund, and walk Nanjing Road at night."


def llm(fake: FakeOpenAI) -> LLM:
    return LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-test", base_url=fake.base_url, timeout_s=5, max_retries=0))


async def test_the_answer_streams_as_delta_events_that_replay_and_join_into_the_answer(tmp_path) -> None:
    async with FakeOpenAI([reply(f"<answer>{TEXT}</answer>", chunk_chars=7)]) as fake, \
            web_stack(tmp_path / "bot.sqlite3", model=llm(fake)) as stack, \
            httpx.AsyncClient(base_url=stack.base_url, timeout=10) as client:
        res = await client.post("/api/chat", json={"message": "Beijing to Shanghai"})
        sid = res.json()["session_id"]
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            first = await reader.until("delta")
            answer = await reader.until("answer")
        streamed = [e for e in reader.seen if e.event == "delta"]
        assert len(streamed) > 5
        assert "".join(e.json()["text"] for e in streamed) == answer.json()["text"] == TEXT
        # a client that saw the first delta resumes right after it: the rest, then the answer
        async with client.stream("GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": first.id or ""}) as again:
            replay = SseReader(again)
            await replay.until("answer")
        assert [e.id for e in replay.seen if e.event == "delta"] == [e.id for e in streamed[1:]]
        fake.assert_complete()


async def test_the_stop_endpoint_stops_the_run_and_the_page_hears_what_was_kept(tmp_path) -> None:
    script = [reply(tool_calls=[call("terminate", {"status": "success"})], chunk_chars=7, hold_after=1, hold_gate="never"),
              reply(f"<answer>{TEXT}</answer>")]
    async with FakeOpenAI(script) as fake, web_stack(tmp_path / "bot.sqlite3", model=llm(fake)) as stack, \
            httpx.AsyncClient(base_url=stack.base_url, timeout=10) as client:
        assert (await client.post("/api/sessions/abcdefgh12/stop", json={})).status_code == 404
        sid = (await client.post("/api/chat", json={"message": "Beijing to Shanghai"})).json()["session_id"]
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            await reader.until("step")
            await fake.wait_for(lambda f: f.request_count >= 1)
            stop = await client.post(f"/api/sessions/{sid}/stop", json={"client_message_id": "s1"})
            assert stop.status_code == 200 and stop.json() == {"outcome": "accepted"}
            again = await client.post(f"/api/sessions/{sid}/stop", json={"client_message_id": "s1"})
            assert again.json() == {"outcome": "duplicate"}  # a double press is harmless
            notice = await reader.until("notice")
            assert notice.json()["kind"] == "cancelled"
            await reader.until("done")
        await fake.wait_for(lambda f: f.requests[0].outcome == "disconnected")
        await client.post("/api/chat", json={"message": "go on"})
        await stack.manager.wait_until_idle(ChatKey("web", sid), 5)
        fake.assert_complete()


async def test_a_stop_naming_a_run_that_ended_does_not_stop_the_run_working_now(tmp_path) -> None:
    script = [reply(f"<answer>{TEXT}</answer>"),
              reply(TEXT, chunk_chars=7, hold_after=2, hold_gate="go"),
              reply(TEXT, chunk_chars=7, hold_after=2, hold_gate="never")]
    async with FakeOpenAI(script) as fake, web_stack(tmp_path / "bot.sqlite3", model=llm(fake)) as stack, \
            httpx.AsyncClient(base_url=stack.base_url, timeout=10) as client:
        sid = (await client.post("/api/chat", json={"message": "Beijing to Shanghai"})).json()["session_id"]
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            first = (await reader.until("step")).json()["run"]
            await reader.until("done")
            await stack.manager.wait_until_idle(ChatKey("web", sid), 5)
            await client.post("/api/chat", json={"message": "and back?", "session_id": sid})
            second = (await reader.until("step")).json()["run"]
            assert second != first
            await reader.until("delta")
            async with asyncio.timeout(5):  # the run starts while its turn's write commits
                while (view := (await client.get(f"/api/sessions/{sid}")).json())["state"] != "working":
                    await asyncio.sleep(0.02)
            assert view["run"] == second  # a reloaded page's Stop names it
            stale = await client.post(f"/api/sessions/{sid}/stop", json={"run": first})  # another tab's old view
            assert stale.json() == {"outcome": "accepted"}
            notice = await reader.until("notice")
            assert notice.json()["kind"] == "info" and "already ended" in notice.json()["text"]
            fake.gate("go").set()
            answer = await reader.until("answer")
            assert answer.json()["text"] == TEXT
            await stack.manager.wait_until_idle(ChatKey("web", sid), 5)
            await client.post("/api/chat", json={"message": "once more", "session_id": sid})
            third = (await reader.until("step")).json()["run"]
            await reader.until("delta")
            stop = await client.post(f"/api/sessions/{sid}/stop", json={"run": third})
            assert stop.json() == {"outcome": "accepted"}
            assert (await reader.until("notice")).json()["kind"] == "cancelled"
        bad = await client.post(f"/api/sessions/{sid}/stop", json={"run": "not a run"})
        assert bad.status_code == 422
