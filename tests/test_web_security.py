"""The web chat made safe to expose: BOT_WEB_TOKEN on every API and SSE request, per-address and
per-chat rate limits (429 with Retry-After), security headers, 404 for unknown sessions' event
streams, the browser's language for command replies, and the OpenAPI docs at /docs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from bot.settings import Settings
from tests.web_runtime import WebStack, web_settings, web_stack

TOKEN = "s3cret-token-for-the-tests"


@pytest.fixture
async def open_stack(tmp_path: Path) -> AsyncIterator[WebStack]:
    async with web_stack(tmp_path / "bot.sqlite3") as s:
        yield s


@pytest.fixture
async def locked_stack(tmp_path: Path) -> AsyncIterator[WebStack]:
    settings = web_settings(tmp_path / "bot.sqlite3", BOT_WEB_TOKEN=TOKEN)
    async with web_stack(tmp_path / "bot.sqlite3", settings=settings) as s:
        yield s


def _client(stack: WebStack, **kw: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=stack.base_url, timeout=10, **kw)  # type: ignore[arg-type]


async def test_an_unknown_sessions_event_stream_is_404(open_stack: WebStack) -> None:
    async with _client(open_stack) as c:
        res = await c.get("/api/sessions/nosuchsession1/events")
        assert res.status_code == 404
        # a session the server has just created streams at once, before its run wrote anything
        sid = (await c.post("/api/chat", json={"message": "/help"})).json()["session_id"]
        async with c.stream("GET", f"/api/sessions/{sid}/events") as stream:
            assert stream.status_code == 200


async def test_command_replies_follow_the_browsers_language(open_stack: WebStack) -> None:
    async with _client(open_stack) as c:
        sid = (await c.post("/api/chat", json={"message": "/help", "lang": "en"})).json()["session_id"]
        await open_stack.manager.wait_until_idle(_chat(sid), 5)
        notices = [e for e in open_stack.web.log_for(sid).after(0) if e.event == "notice"]
        assert notices and "I plan trips" in notices[-1].data
        sid_zh = (await c.post("/api/chat", json={"message": "/help", "lang": "zh"})).json()["session_id"]
        await open_stack.manager.wait_until_idle(_chat(sid_zh), 5)
        assert "出行规划助手" in [e for e in open_stack.web.log_for(sid_zh).after(0) if e.event == "notice"][-1].data


def _chat(sid: str):  # type: ignore[no-untyped-def]
    from bot.surface import ChatKey

    return ChatKey("web", sid, "")


async def test_every_api_and_sse_request_needs_the_token(locked_stack: WebStack) -> None:
    async with _client(locked_stack) as c:
        assert (await c.get("/")).status_code == 200  # the page itself is public: it asks for the token
        assert (await c.get("/api/auth")).json() == {"required": True, "authenticated": False}
        assert (await c.post("/api/chat", json={"message": "hi"})).status_code == 401
        assert (await c.post("/api/human_response", json={"session_id": "abcdefgh", "response": "x"})).status_code == 401
        assert (await c.get("/api/sessions/abcdefgh")).status_code == 401
        assert (await c.get("/api/sessions/abcdefgh/events")).status_code == 401
        assert (await c.get("/metrics")).status_code == 401
        assert (await c.get("/healthz")).status_code == 200
        assert (await c.post("/api/login", json={"token": "wrong-token-wrong-token"})).status_code == 401
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    async with _client(locked_stack, headers=bearer) as c:
        sid = (await c.post("/api/chat", json={"message": "/help"})).json()["session_id"]
        async with c.stream("GET", f"/api/sessions/{sid}/events") as stream:
            assert stream.status_code == 200
        assert (await c.get("/metrics")).status_code == 200
    async with _client(locked_stack) as c:  # the page's way: the cookie from /api/login
        login = await c.post("/api/login", json={"token": TOKEN})
        assert login.status_code == 204
        cookie = login.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and TOKEN.lower() not in cookie
        assert (await c.get("/api/auth")).json() == {"required": True, "authenticated": True}
        assert (await c.get(f"/api/sessions/{sid}")).status_code == 200
        async with c.stream("GET", f"/api/sessions/{sid}/events") as stream:
            assert stream.status_code == 200


def test_a_public_address_without_a_token_is_refused() -> None:
    s = Settings(_env_file=None, BOT_HOST="0.0.0.0")  # type: ignore[call-arg]
    assert [name for name, _ in s.problems()] == ["BOT_WEB_TOKEN"]
    assert Settings(_env_file=None, BOT_HOST="0.0.0.0", BOT_WEB_TOKEN=TOKEN).problems() == []  # type: ignore[call-arg]
    assert Settings(_env_file=None, BOT_HOST="::1").problems() == []  # type: ignore[call-arg]
    assert Settings(_env_file=None, BOT_HOST="localhost").problems() == []  # type: ignore[call-arg]


async def test_per_chat_and_per_address_limits_answer_429_with_retry_after(tmp_path: Path) -> None:
    settings = web_settings(tmp_path / "bot.sqlite3", BOT_RATE_PER_USER=12, BOT_RATE_PER_IP=1000)
    async with web_stack(tmp_path / "bot.sqlite3", settings=settings) as stack, _client(stack) as c:
        sid = (await c.post("/api/chat", json={"message": "/help"})).json()["session_id"]
        codes = [(await c.post("/api/chat", json={"message": "/status", "session_id": sid})).status_code for _ in range(7)]
        assert codes[:5] == [200] * 5 and codes[-1] == 429, codes  # a burst of 6, then 12 a minute
        # the per-chat limit is the runtime's, the same on every surface (bot.ratelimit.Limits)
        limited = await c.post("/api/chat", json={"message": "/status", "session_id": sid})
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        # another chat from the same address is not held back by this one's limit
        assert (await c.post("/api/chat", json={"message": "/help"})).status_code == 200
    settings = web_settings(tmp_path / "b2.sqlite3", BOT_RATE_PER_USER=1000, BOT_RATE_PER_IP=20)
    async with web_stack(tmp_path / "b2.sqlite3", settings=settings) as stack, _client(stack) as c:
        codes = [(await c.post("/api/chat", json={"message": "/help"})).status_code for _ in range(8)]
        assert codes[:5] == [200] * 5 and codes[-1] == 429, codes  # every chat from one address counts
        assert int((await c.post("/api/chat", json={"message": "/help"})).headers["retry-after"]) >= 1


async def test_security_headers_and_a_strict_content_security_policy(open_stack: WebStack) -> None:
    async with _client(open_stack) as c:
        page = await c.get("/")
        csp = page.headers["content-security-policy"]
        assert "'unsafe-inline'" not in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        for res in (page, await c.get("/api/auth"), await c.get("/healthz")):
            assert res.headers["x-content-type-options"] == "nosniff"
            assert res.headers["referrer-policy"] == "no-referrer"
            assert res.headers["x-frame-options"] == "DENY"
        for path, media in (("/app.js", "text/javascript"), ("/app.css", "text/css"),
                            ("/favicon.svg", "image/svg+xml"), ("/favicon.ico", "image/svg+xml")):
            res = await c.get(path)
            assert res.status_code == 200 and res.headers["content-type"].startswith(media), path


async def test_the_web_api_is_documented_at_docs(open_stack: WebStack) -> None:
    async with _client(open_stack) as c:
        assert (await c.get("/docs")).status_code == 200
        schema = (await c.get("/openapi.json")).json()
        paths = schema["paths"]
        for path in ("/api/chat", "/api/human_response", "/api/sessions/{session_id}",
                     "/api/sessions/{session_id}/events", "/api/login", "/api/auth"):
            assert path in paths, sorted(paths)
        assert "429" in paths["/api/chat"]["post"]["responses"]
        assert "/healthz" not in paths and "/" not in paths
