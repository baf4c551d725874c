"""Slack's side of Socket Mode on 127.0.0.1: the WebSocket an app connects to instead of
receiving HTTP deliveries.

    socket = SlackSocketMode(fake_slack)          # FakeSlack's apps.connections.open now answers
    await socket.start()
    await socket.wait_connected()
    ack = await socket.app_mention(msg)           # -> the envelope's ack, or AssertionError
    await socket.refresh()                        # Slack asks the app to reconnect

As Slack does: apps.connections.open (app-level token only) hands out a single-use URL; the
server greets each connection with `hello`; every envelope (`events_api`, `interactive`) must
be acknowledged with its `envelope_id` (the fake fails the wait after `ack_within` seconds, as
Slack would redeliver); pings get pongs with the same data; `disconnect` (refresh_requested)
tells the app to open a new connection. Unknown or repeated acknowledgements are counted in
`stray_acks`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.slack_api import FakeSlack, SlackMessage
from tests.fakes.slack_events import event_callback, message_event


@dataclass(frozen=True)
class Ack:
    envelope_id: str
    seconds: float
    payload: dict[str, Any] | None


@dataclass
class _Connection:
    ws: web.WebSocketResponse
    opened: float = field(default_factory=time.monotonic)


class SlackSocketMode:
    def __init__(self, slack: FakeSlack, *, ack_within: float = 3.0, host: str = "127.0.0.1") -> None:
        self.slack = slack
        self.ack_within = ack_within
        self._host = host
        self.port = 0
        self._tickets: set[str] = set()
        self._current: _Connection | None = None
        self._connected = asyncio.Event()
        self._pending: dict[str, tuple[float, asyncio.Future[Ack]]] = {}
        self.connections = 0  # WebSocket connections accepted so far
        self.stray_acks: list[str] = []
        self._runner: web.AppRunner | None = None
        slack.socket_mode = self

    async def start(self) -> SlackSocketMode:
        app = web.Application()
        app.router.add_get("/link/", self._link)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self._host, 0).start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def close(self) -> None:
        if self._current is not None:
            with contextlib.suppress(Exception):
                await self._current.ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def issue_url(self) -> str:
        ticket = uuid.uuid4().hex
        self._tickets.add(ticket)
        return f"ws://{self._host}:{self.port}/link/?ticket={ticket}&app_id=AFAKE"

    async def wait_connected(self, within: float = 10.0) -> None:
        async with asyncio.timeout(within):
            await self._connected.wait()

    # -- what Slack sends

    async def app_mention(self, msg: SlackMessage, **kw: Any) -> Ack:
        return await self.event(message_event(msg, "app_mention"), **kw)

    async def message(self, msg: SlackMessage, **kw: Any) -> Ack:
        return await self.event(message_event(msg, "message"), **kw)

    async def event(self, event: dict[str, Any], *, event_id: str | None = None, retry_attempt: int = 0) -> Ack:
        payload = event_callback(event, event_id, team_id=self.slack.team_id, bot_user_id=self.slack.bot_user_id)
        return await self.envelope("events_api", payload, retry_attempt=retry_attempt)

    async def envelope(self, kind: str, payload: dict[str, Any], *, retry_attempt: int = 0) -> Ack:
        if self._current is None:
            raise AssertionError("no Socket Mode connection is open")
        envelope_id = str(uuid.uuid4())
        fut: asyncio.Future[Ack] = asyncio.get_running_loop().create_future()
        self._pending[envelope_id] = (time.perf_counter(), fut)
        await self._current.ws.send_str(json.dumps({
            "envelope_id": envelope_id, "payload": payload, "type": kind,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": retry_attempt, "retry_reason": "timeout" if retry_attempt else "",
        }))
        try:
            async with asyncio.timeout(self.ack_within):
                return await fut
        except TimeoutError:
            raise AssertionError(f"envelope {envelope_id} ({kind}) was not acknowledged within {self.ack_within} s") from None
        finally:
            self._pending.pop(envelope_id, None)

    async def refresh(self) -> None:
        """Slack's periodic `disconnect`: the app must open a new connection (and URL) itself."""
        if self._current is None:
            raise AssertionError("no Socket Mode connection is open")
        self._connected.clear()
        await self._current.ws.send_str(json.dumps({
            "type": "disconnect", "reason": "refresh_requested", "debug_info": {"host": "fake"}}))

    # -- the WebSocket

    async def _link(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:  # single-use, and only from apps.connections.open
            return web.Response(status=401, text="invalid ticket")
        self._tickets.discard(ticket)
        ws = web.WebSocketResponse(autoping=True)  # pings from the SDK get pongs with their data
        await ws.prepare(request)
        conn = _Connection(ws)
        self._current = conn
        self.connections += 1
        await ws.send_str(json.dumps({
            "type": "hello", "num_connections": 1,
            "debug_info": {"host": "fake", "approximate_connection_time": 18060},
            "connection_info": {"app_id": "AFAKE"},
        }))
        self._connected.set()
        async for msg in ws:
            if msg.type is WSMsgType.TEXT:
                self._on_text(msg.data)
        if self._current is conn:
            self._current = None
        return ws

    def _on_text(self, data: str) -> None:
        try:
            body = json.loads(data)
        except json.JSONDecodeError:
            self.stray_acks.append(data[:200])
            return
        envelope_id = body.get("envelope_id") if isinstance(body, dict) else None
        waiting = self._pending.get(envelope_id) if isinstance(envelope_id, str) else None
        if waiting is None or waiting[1].done():
            self.stray_acks.append(str(envelope_id))
            return
        started, fut = waiting
        fut.set_result(Ack(envelope_id, time.perf_counter() - started, body.get("payload")))  # type: ignore[arg-type]
