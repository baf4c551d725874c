"""The model client's connections (the openai SDK's client on its aiohttp transport), seen through the LLM client
against raw HTTP servers on 127.0.0.1 that do what real endpoints do at the connection level:
keep connections alive, compress bodies, hang up, speak garbage, stream and notice a reader that
left. Each fault must reach the retry policy as the kind it is (a dropped connection is a
connection fault, not a timeout), since that is what is retried and counted: the SDK's aiohttp
client names several of them wrongly, and agent_core/llm_faults.py names them back."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trustme
from aiohttp import web

from agent_core.errors import LLMStreamBroken, LLMUnavailable
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from agent_core.schema import Message
from tests.test_llm_retries import Recorder
from tests.test_memory_cycles import cyclic_garbage

HELLO = [Message.user("hello")]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def completion(text: str) -> dict[str, object]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}


def make_llm(base_url: str, errors: Recorder | None = None, **settings: object) -> LLM:
    chosen: dict[str, object] = {"timeout_s": 5.0, "max_retries": 0, **settings}
    config = LLMConfig(model="test-model", api_key="sk-test", base_url=base_url, **chosen)  # type: ignore[arg-type]
    return LLM(config, observer=errors)


@asynccontextmanager
async def endpoint(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


@pytest.fixture
def authority() -> trustme.CA:
    return trustme.CA()


def server_tls(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    return context


async def test_calls_in_a_row_share_one_connection() -> None:
    peers: list[object] = []

    async def handler(request: web.Request) -> web.Response:
        assert request.transport is not None
        peers.append(request.transport.get_extra_info("peername"))
        return web.json_response(completion(f"reply {len(peers)}"))

    async with endpoint(handler) as url:
        llm = make_llm(url)
        try:
            assert [await llm.ask(HELLO) for _ in range(5)] == [f"reply {n}" for n in range(1, 6)]
        finally:
            await llm.aclose()
    assert len(peers) == 5 and len(set(peers)) == 1, peers


async def test_a_compressed_reply_is_read() -> None:
    async def handler(request: web.Request) -> web.Response:
        assert "gzip" in request.headers.get("Accept-Encoding", "")
        body = gzip.compress(json.dumps(completion("packed")).encode())
        return web.Response(body=body, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})

    async with endpoint(handler) as url:
        llm = make_llm(url)
        try:
            assert await llm.ask(HELLO) == "packed"
        finally:
            await llm.aclose()


async def test_the_request_arrives_whole_with_its_headers() -> None:
    seen: list[tuple[dict[str, object], str, str]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append((await request.json(), request.headers["Authorization"], request.headers["Content-Type"]))
        return web.json_response(completion("ok"))

    async with endpoint(handler) as url:
        llm = make_llm(url)
        try:
            await llm.ask([Message.user("你好, Shanghai")])
        finally:
            await llm.aclose()
    ((body, auth, ctype),) = seen
    assert body["model"] == "test-model" and body["messages"] == [{"role": "user", "content": "你好, Shanghai"}]
    assert auth == "Bearer sk-test" and ctype == "application/json"


async def test_a_tls_endpoint_signed_by_an_authority_the_machine_trusts_is_reached(
    authority: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.json_response(completion("over tls"))

    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # the standard variable: the SDK's client honours it
    async with endpoint(handler, server_tls(authority)) as url:
        llm = make_llm(url)
        try:
            assert await llm.ask(HELLO) == "over tls"
        finally:
            await llm.aclose()


async def test_a_tls_endpoint_with_a_certificate_nobody_trusts_is_refused(authority: trustme.CA) -> None:
    served: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        served.append(request.path)
        return web.json_response(completion("should not be read"))

    errors = Recorder()
    async with endpoint(handler, server_tls(authority)) as url:
        llm = make_llm(url, errors)
        try:
            with pytest.raises(LLMUnavailable) as raised:
                await llm.ask(HELLO)
        finally:
            await llm.aclose()
    assert served == [] and errors.errors == ["connection", "unavailable"]
    assert "APIConnectionError" in str(raised.value)


async def test_a_refused_connection_is_a_connection_fault() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    errors = Recorder()
    llm = make_llm(f"http://127.0.0.1:{port}/v1", errors)
    try:
        with pytest.raises(LLMUnavailable) as raised:
            await llm.ask(HELLO)
    finally:
        await llm.aclose()
    assert errors.errors == ["connection", "unavailable"]  # the attempt, then the call given up
    assert "APIConnectionError" in str(raised.value)


async def test_a_refused_connection_leaves_no_cycles() -> None:
    """aiohttp's connect path keeps the failed attempt's exception in a frame its traceback holds;
    a fault kept by the retry policy must not carry that cycle (a refused endpoint: every waiting
    conversation's every attempt)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = make_llm(f"http://127.0.0.1:{port}/v1", max_retries=1, backoff_base_s=0.01, backoff_cap_s=0.02)
    try:
        for _ in range(2):  # the first calls pay what is made once (imports, the session)
            with pytest.raises(LLMUnavailable):
                await llm.ask(HELLO)
        with cyclic_garbage() as found, pytest.raises(LLMUnavailable):
            await llm.ask(HELLO)
    finally:
        await llm.aclose()
    assert not found, found.most_common(10)


async def test_a_server_speaking_garbage_is_a_connection_fault() -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        writer.write(b"SMTP READY\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(garbage, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    errors = Recorder()
    llm = make_llm(f"http://127.0.0.1:{port}/v1", errors)
    try:
        with pytest.raises(LLMUnavailable):
            await llm.ask(HELLO)
    finally:
        await llm.aclose()
        server.close()
        await server.wait_closed()
    assert errors.errors == ["connection", "unavailable"]  # the attempt, then the call given up


async def speak_garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.read(65536)
    writer.write(b"SMTP READY\r\n\r\n")
    await writer.drain()
    writer.close()


async def test_a_reply_that_is_not_http_is_named_a_connection_fault() -> None:
    server = await asyncio.start_server(speak_garbage, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    errors = Recorder()
    llm = make_llm(f"http://127.0.0.1:{port}/v1", errors)
    try:
        with pytest.raises(LLMUnavailable) as raised:
            await llm.ask(HELLO)
    finally:
        await llm.aclose()
        server.close()
        await server.wait_closed()
    assert errors.errors == ["connection", "unavailable"]
    assert "APIConnectionError" in str(raised.value)


async def test_a_streamed_call_to_a_server_speaking_garbage_is_a_connection_fault() -> None:
    server = await asyncio.start_server(speak_garbage, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    errors = Recorder()
    llm = make_llm(f"http://127.0.0.1:{port}/v1", errors, stream=True)
    try:
        with pytest.raises(LLMUnavailable) as raised:
            async for _ in llm.stream_tool(HELLO):
                pass
    finally:
        await llm.aclose()
        server.close()
        await server.wait_closed()
    assert errors.errors == ["connection", "unavailable"]
    assert "APIConnectionError" in str(raised.value)


async def test_a_streamed_call_refused_is_a_connection_fault() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    errors = Recorder()
    llm = make_llm(f"http://127.0.0.1:{port}/v1", errors, stream=True)
    try:
        with pytest.raises(LLMUnavailable) as raised:
            async for _ in llm.stream_tool(HELLO):
                pass
    finally:
        await llm.aclose()
    assert errors.errors == ["connection", "unavailable"]
    assert "APIConnectionError" in str(raised.value)


async def test_a_reply_cut_short_is_a_connection_fault_and_retried_as_one() -> None:
    served: list[str] = []

    async def cut_first(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        length = int(next((line.split(b":")[1] for line in request.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), b"0"))
        await reader.readexactly(length)
        body = json.dumps(completion("whole")).encode()
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode()
        served.append("cut" if not served else "whole")
        writer.write(head + b"\r\n\r\n" + (body[:10] if served[-1] == "cut" else body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(cut_first, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    errors = Recorder()
    llm = make_llm(f"http://127.0.0.1:{port}/v1", errors, max_retries=1, backoff_base_s=0.01, backoff_cap_s=0.02)
    try:
        assert await llm.ask(HELLO) == "whole"
    finally:
        await llm.aclose()
        server.close()
        await server.wait_closed()
    assert served == ["cut", "whole"] and errors.errors == ["connection"]


async def test_a_stream_whose_connection_drops_mid_reply_is_broken_with_what_was_shown() -> None:
    async def drop_mid_stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
                 "choices": [{"index": 0, "delta": {"content": "Half a "}, "finish_reason": None}]}
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        assert request.transport is not None
        request.transport.close()  # the connection goes mid-body: the chunked reply never ends
        return response

    errors = Recorder()
    async with endpoint(drop_mid_stream) as url:
        llm = make_llm(url, errors, stream=True, max_retries=2)
        pieces: list[object] = []
        try:
            with pytest.raises(LLMStreamBroken) as raised:
                async for piece in llm.stream_tool(HELLO):
                    pieces.append(piece)
        finally:
            await llm.aclose()
    assert pieces == ["Half a "] and raised.value.shown_chars == len("Half a ")
    assert errors.errors == ["unavailable"]  # not retried: a second reply would not continue the first


async def hang_up_first(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        served: list[str]) -> None:
    """The first connection is closed once its request arrived, with no answer (a server that
    restarted, a proxy that gave up); later ones are answered."""
    request = await reader.readuntil(b"\r\n\r\n")
    length = int(next((line.split(b":")[1] for line in request.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), b"0"))
    await reader.readexactly(length)
    served.append("dropped" if not served else "answered")
    if served[-1] == "answered":
        body = json.dumps(completion("after the drop")).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)
        await writer.drain()
    writer.close()


async def test_a_dropped_connection_is_a_connection_fault_and_retried_as_one() -> None:
    served: list[str] = []
    server = await asyncio.start_server(lambda r, w: hang_up_first(r, w, served), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    errors = Recorder()
    llm = make_llm(f"http://127.0.0.1:{port}/v1", errors, max_retries=1, backoff_base_s=0.01, backoff_cap_s=0.02)
    try:
        assert await llm.ask(HELLO) == "after the drop"
    finally:
        await llm.aclose()
        server.close()
        await server.wait_closed()
    assert served == ["dropped", "answered"] and errors.errors == ["connection"]


async def test_a_dropped_connection_with_no_retries_left_is_given_up_as_a_connection_fault() -> None:
    served: list[str] = []
    server = await asyncio.start_server(lambda r, w: hang_up_first(r, w, served), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    errors = Recorder()
    llm = make_llm(f"http://127.0.0.1:{port}/v1", errors)
    try:
        with pytest.raises(LLMUnavailable) as raised:
            await llm.ask(HELLO)
    finally:
        await llm.aclose()
        server.close()
        await server.wait_closed()
    assert served == ["dropped"] and errors.errors == ["connection", "unavailable"]
    assert "APIConnectionError" in str(raised.value)


async def test_a_reply_that_never_comes_is_a_timeout() -> None:
    released = asyncio.Event()

    async def slow(request: web.Request) -> web.Response:
        await released.wait()
        return web.json_response(completion("late"))

    errors = Recorder()
    async with endpoint(slow) as url:
        llm = make_llm(url, errors, timeout_s=0.3)
        try:
            with pytest.raises(LLMUnavailable):
                await llm.ask(HELLO)
        finally:
            released.set()  # the server's handlers outlive their client's hang-up
            await llm.aclose()
    assert errors.errors == ["timeout", "unavailable"]


async def test_a_stream_left_early_hangs_up_so_the_model_stops_writing() -> None:
    ended = asyncio.Event()

    async def streaming(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            for n in range(1000):
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
                         "choices": [{"index": 0, "delta": {"content": f"word{n} "}, "finish_reason": None}]}
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
                await asyncio.sleep(0.02)
        finally:
            ended.set()  # a write to a closed connection raised, or the handler was cancelled
        return response

    async with endpoint(streaming) as url:
        llm = make_llm(url, stream=True)
        try:
            async for piece in llm.stream_tool(HELLO):
                assert isinstance(piece, str) and piece.startswith("word0")
                break
            await asyncio.wait_for(ended.wait(), timeout=5)
        finally:
            await llm.aclose()
