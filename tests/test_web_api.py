"""The web chat API over real HTTP with the real SessionManager and a scripted model."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

import httpx
import pytest

from bot.run.records import message_to_json
from bot.surface import ChatKey, IncomingMessage
from tests.scripted_trip import DAYS, QUESTION_EN, QUESTION_ZH
from tests.web_runtime import WebStack, web_model, web_stack
from tests.web_sse import SseReader


@pytest.fixture
async def stack(tmp_path) -> AsyncIterator[WebStack]:
    async with web_stack(tmp_path / "bot.sqlite3") as s:
        yield s


@pytest.fixture
async def client(stack: WebStack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=stack.base_url, timeout=10) as c:
        yield c


async def _start(client: httpx.AsyncClient, text: str = "Beijing to Shanghai, please", **extra: object) -> str:
    res = await client.post("/api/chat", json={"message": text, **extra})
    assert res.status_code == 200, res.text
    return str(res.json()["session_id"])


async def _question_waiting(stack: WebStack, sid: str, within: float = 5.0) -> None:
    """Wait for the question to be stored (wait_until_idle counts a waiting run as busy)."""
    async with asyncio.timeout(within):
        while await stack.manager.pending_question(ChatKey("web", sid)) is None:
            await asyncio.sleep(0.02)


def _seq(event_id: str | None) -> int:
    assert event_id is not None
    return int(event_id.rsplit("-", 1)[1])


async def test_the_whole_question_flow(stack: WebStack, client: httpx.AsyncClient):
    sid = await _start(client)
    async with client.stream("GET", f"/api/sessions/{sid}/events") as res:
        assert res.status_code == 200
        assert res.headers["content-type"].startswith("text/event-stream")
        reader = SseReader(res)
        step = await reader.until("step")
        assert step.json()["step"] == 1
        question = await reader.until("human_input_request")
        data = question.json()
        assert data["question"] == QUESTION_EN
        assert data["session_id"] == sid
        assert data["options"] == list(DAYS)
        assert "tool" in [e.event for e in reader.seen]

        ack = await client.post("/api/human_response", json={"session_id": sid, "response": DAYS[1], "option": True})
        assert ack.status_code == 200
        assert ack.json()["tool_call_id"] == data["tool_call_id"]

        answer = await reader.until("answer")
        plan = answer.json()["plan"]
        assert plan["start_date"] == DAYS[1]
        assert plan["legs"][0]["number"] == "G1"
        assert plan["total_cost"] == 1033
        assert DAYS[1] in answer.json()["text"]
        done = await reader.until("done")
        assert done.json()["steps"] == 2
        seqs = [_seq(e.id) for e in reader.seen]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    view = (await client.get(f"/api/sessions/{sid}")).json()
    assert view["state"] == "idle"
    assert view["pending"] is None
    assert [e["role"] for e in view["entries"]] == ["user", "question", "answer", "assistant"]
    assert view["entries"][-1]["plan"]["start_date"] == DAYS[1]
    assert view["last_event_id"] == done.id

    metrics = (await client.get("/metrics")).text
    assert re.search(r'bot_runs_total\{outcome="answered"\} 1\.0', metrics)


async def test_chinese_request_gets_the_chinese_question(client: httpx.AsyncClient):
    sid = await _start(client, "下周五从北京去上海，住一晚")
    async with client.stream("GET", f"/api/sessions/{sid}/events") as res:
        question = await SseReader(res).until("human_input_request")
    assert question.json()["question"] == QUESTION_ZH


async def test_reconnect_with_last_event_id_replays_what_was_missed(stack: WebStack, client: httpx.AsyncClient):
    sid = await _start(client)
    async with client.stream("GET", f"/api/sessions/{sid}/events") as res:
        reader = SseReader(res)
        first = await reader.next()
        question = await reader.until("human_input_request")
    ack = await client.post("/api/human_response", json={"session_id": sid, "response": DAYS[0]})
    assert ack.status_code == 200
    await stack.manager.wait_until_idle(ChatKey("web", sid), 5)

    headers = {"Last-Event-ID": first.id or ""}
    async with client.stream("GET", f"/api/sessions/{sid}/events", headers=headers) as res:
        reader = SseReader(res)
        replayed = [await reader.next() for _ in range(_seq(stack.web.log_for(sid).last_id) - _seq(first.id))]
    assert _seq(replayed[0].id) == _seq(first.id) + 1
    events = [e.event for e in replayed]
    assert "human_input_request" in events and events[-2:] == ["answer", "done"]
    assert question.id in [e.id for e in replayed]

    # the page's first connection after a reload passes the id as ?after=
    async with client.stream("GET", f"/api/sessions/{sid}/events?after={question.id}") as res:
        nxt = await SseReader(res).next()
    assert _seq(nxt.id) == _seq(question.id) + 1


async def test_an_id_from_before_a_restart_gets_a_reset(client: httpx.AsyncClient):
    sid = await _start(client)
    async with client.stream("GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "deadbeef-7"}) as res:
        reset = await SseReader(res).next()
    assert reset.event == "reset"
    assert reset.json()["last_event_id"] == reset.id


async def test_a_client_that_leaves_mid_run_finds_the_answer_on_reconnect(tmp_path):
    model = web_model(gate=asyncio.Event())
    async with web_stack(tmp_path / "bot.sqlite3", model=model) as stack, httpx.AsyncClient(
        base_url=stack.base_url, timeout=10
    ) as client:
        model.gate.set()  # type: ignore[union-attr]
        sid = await _start(client)
        async with client.stream("GET", f"/api/sessions/{sid}/events") as res:
            reader = SseReader(res)
            await reader.until("human_input_request")
            model.gate.clear()  # type: ignore[union-attr]
            model.held.clear()
            ack = await client.post("/api/human_response", json={"session_id": sid, "response": DAYS[1]})
            assert ack.status_code == 200
            await asyncio.wait_for(model.held.wait(), 5)  # the run is inside its model call now
            seen = reader.seen[-1].id
        # the stream is closed; the run goes on without anyone listening
        model.gate.set()  # type: ignore[union-attr]
        await stack.manager.wait_until_idle(ChatKey("web", sid), 5)
        async with client.stream("GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": seen or ""}) as res:
            reader = SseReader(res)
            answer = await reader.until("answer")
            await reader.until("done")
        assert answer.json()["plan"]["start_date"] == DAYS[1]
        view = (await client.get(f"/api/sessions/{sid}")).json()
        assert view["entries"][-1]["role"] == "assistant"


async def test_human_response_errors(client: httpx.AsyncClient, stack: WebStack):
    unknown = await client.post("/api/human_response", json={"session_id": "nosuchsession", "response": "x"})
    assert unknown.status_code == 404
    sid = await _start(client)
    async with client.stream("GET", f"/api/sessions/{sid}/events") as res:
        reader = SseReader(res)
        await reader.until("human_input_request")
        ok = await client.post("/api/human_response", json={"session_id": sid, "response": DAYS[0]})
        assert ok.status_code == 200
        await reader.until("done")
    nothing = await client.post("/api/human_response", json={"session_id": sid, "response": "again"})
    assert nothing.status_code == 409


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/chat", {}),
        ("/api/chat", {"message": "   "}),
        ("/api/chat", {"message": 5}),
        ("/api/chat", {"message": "hi", "session_id": "has:colon"}),
        ("/api/chat", {"message": "hi", "session_id": "short"}),
        ("/api/chat", {"message": "hi", "surprise": True}),
        ("/api/chat", {"message": "hi", "location": {"latitude": 123, "longitude": 0}}),
        ("/api/human_response", {"session_id": "abcdefgh12"}),
        ("/api/human_response", {"response": "yes"}),
        ("/api/human_response", {"session_id": "abcdefgh12", "response": ""}),
    ],
)
async def test_bad_bodies_are_422(client: httpx.AsyncClient, path: str, body: dict[str, object]):
    res = await client.post(path, json=body)
    assert res.status_code == 422, res.text


async def test_invalid_json_and_overlong_messages_are_422(client: httpx.AsyncClient, stack: WebStack):
    res = await client.post("/api/chat", content=b"{not json", headers={"content-type": "application/json"})
    assert res.status_code == 422
    too_long = "x" * (stack.settings.max_message_chars + 1)
    assert (await client.post("/api/chat", json={"message": too_long})).status_code == 422


async def test_bodies_over_64k_are_413(client: httpx.AsyncClient):
    res = await client.post("/api/chat", json={"message": "x" * (64 * 1024)})
    assert res.status_code == 413
    res = await client.post("/api/human_response", json={"session_id": "abcdefgh12", "response": "y" * 70000})
    assert res.status_code == 413


async def test_a_double_submit_with_the_same_client_id_is_harmless(stack: WebStack, client: httpx.AsyncClient):
    sid = await _start(client, client_message_id="m1")
    again = await client.post("/api/chat", json={"message": "Beijing to Shanghai, please", "session_id": sid, "client_message_id": "m1"})
    assert again.json() == {"session_id": sid, "outcome": "duplicate"}
    await _question_waiting(stack, sid)
    view = (await client.get(f"/api/sessions/{sid}")).json()
    assert [e["role"] for e in view["entries"]] == ["user", "question"]
    assert view["pending"]["question"] == QUESTION_EN
    assert view["state"] in {"asking", "parked"}


async def test_shared_location_reaches_the_session(stack: WebStack, client: httpx.AsyncClient):
    sid = await _start(client, location={"latitude": 31.2304, "longitude": 121.4737})
    await _question_waiting(stack, sid)
    session = await stack.store.get_session(str(ChatKey("web", sid)))
    assert session is not None and session.location is not None
    assert "31.2304" in session.location and "121.4737" in session.location


async def test_session_view_for_reload(client: httpx.AsyncClient, stack: WebStack):
    assert (await client.get("/api/sessions/nosuchsession")).status_code == 404
    assert (await client.get("/api/sessions/bad:id")).status_code in {404, 422}
    sid = await _start(client)
    await _question_waiting(stack, sid)
    view = (await client.get(f"/api/sessions/{sid}")).json()
    assert view["session_id"] == sid
    assert view["pending"]["options"] == list(DAYS)
    # opening the stream after last_event_id yields only what comes next
    async with client.stream("GET", f"/api/sessions/{sid}/events?after={view['last_event_id']}") as res:
        reader = SseReader(res)
        await client.post("/api/human_response", json={"session_id": sid, "response": DAYS[0]})
        first = await reader.next()
    assert first.event == "step" and first.json()["step"] == 2


async def test_a_session_whose_first_message_another_process_stored_is_known(client: httpx.AsyncClient, stack: WebStack):
    # Behind a load balancer the page's POST /api/chat reaches one process and its event stream
    # another, before the session is started: the stored message makes the session known.
    sid = "started0elsewhere"
    assert (await client.get(f"/api/sessions/{sid}")).status_code == 404
    first = IncomingMessage(chat=ChatKey("web", sid), user_id=sid, text="Beijing to Shanghai, please")
    assert await stack.store.add_inbox("web", "", str(first.chat), message_to_json(first)) is not None
    view = await client.get(f"/api/sessions/{sid}")
    assert view.status_code == 200, view.text
    assert view.json()["state"] == "new"
    async with client.stream("GET", f"/api/sessions/{sid}/events") as res:
        assert res.status_code == 200
        assert (await SseReader(res).comment()) == "connected"
    stop = await client.post(f"/api/sessions/{sid}/stop", json={})
    assert stop.status_code == 200, stop.text


async def test_keepalive_comments_flow_while_idle(tmp_path):
    async with web_stack(tmp_path / "bot.sqlite3", keepalive_s=0.2) as stack, httpx.AsyncClient(
        base_url=stack.base_url, timeout=10
    ) as client:
        sid = await _start(client, "/help")  # a session with nothing running: only keep-alives flow
        await stack.manager.wait_until_idle(ChatKey("web", sid), 5)
        after = {"after": stack.web.log_for(sid).last_id}
        async with client.stream("GET", f"/api/sessions/{sid}/events", params=after) as res:
            await _keepalives(SseReader(res))


async def _keepalives(reader: SseReader) -> None:
    assert await reader.comment(within=3) == "connected"
    started = asyncio.get_running_loop().time()
    assert (await reader.comment(within=3)).startswith("ping")
    assert (await reader.comment(within=3)).startswith("ping")
    assert asyncio.get_running_loop().time() - started < 2


async def test_stopping_the_adapter_ends_open_streams(stack: WebStack, client: httpx.AsyncClient):
    sid = await _start(client, "/help")
    await stack.manager.wait_until_idle(ChatKey("web", sid), 5)
    after = {"after": stack.web.log_for(sid).last_id}
    async with client.stream("GET", f"/api/sessions/{sid}/events", params=after) as res:
        reader = SseReader(res)
        await reader.comment(within=3)  # "connected"
        await stack.web.stop()
        with pytest.raises(StopAsyncIteration):
            await reader.next(within=3)


async def test_page_health_and_nothing_from_the_internet(client: httpx.AsyncClient):
    page = await client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text)
    script = await client.get("/app.js")
    assert "EventSource" in script.text and "/api/human_response" in script.text
    health = await client.get("/healthz")
    assert health.status_code == 200
    assert health.json()["checks"] == {"http": True, "store": True, "web": True}
