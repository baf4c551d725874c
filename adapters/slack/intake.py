"""How Slack's events and clicks reach the bot: `POST /slack/events`, or Socket Mode.

HTTP mode serves `POST /slack/events` through `router()`: Bolt's request verification checks
the signature first (five-minute window; refusals are logged without the body, see
adapters/slack/signing.py), then Bolt runs the listener, which only maps the event and submits
it to the SessionManager (stored in the inbox: a few milliseconds; it never waits for a run),
and only then the empty 200 acks: a 2xx means "stored", whichever process behind a load
balancer took the request, and a process killed before storing lets Slack retry the event.
Socket Mode (SLACK_APP_TOKEN) feeds the same Bolt app over a websocket instead.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.adapter.starlette.async_handler import to_async_bolt_request
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.signing import SignedRequests

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"


def _answered_inline(body: bytes) -> bool:
    """url_verification and ssl_check need Bolt's answer in the response; nothing else does."""
    head = body[:200]
    return b'"url_verification"' in head or b"ssl_check=" in head or not head.strip()


class SlackIntake:
    def __init__(self, app: AsyncApp, client: AsyncWebClient, signing_secret: str | None, app_token: str | None) -> None:
        self._app = app
        self._client = client
        self._app_token = app_token
        self._handler = AsyncSlackRequestHandler(app)
        self._verifier = SignedRequests(signing_secret, logger=log) if signing_secret else None
        self._socket: Any = None
        self._socket_down_since: float | None = None
        self.socket_grace_s = 30.0  # a Socket Mode connection down this long makes /healthz unhealthy

    async def connect(self) -> None:
        """Socket Mode, when the settings ask for it."""
        if self._app_token:
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            self._socket = AsyncSocketModeHandler(self._app, self._app_token, web_client=self._client)
            await self._socket.connect_async()
            log.info("slack: Socket Mode connected")

    async def healthy(self) -> bool:
        """Socket Mode connected, or reconnecting for less than `socket_grace_s` (the SDK reconnects
        by itself after Slack's routine refreshes); events over HTTP are the HTTP server's health."""
        if self._socket is None:
            return True
        if await self._socket.client.is_connected():
            self._socket_down_since = None
            return True
        now = time.monotonic()
        if self._socket_down_since is None:
            self._socket_down_since = now
        return now - self._socket_down_since < self.socket_grace_s

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None

    def router(self) -> APIRouter:
        router = APIRouter()
        if self._verifier is not None:
            router.add_api_route(EVENTS_PATH, self._events_endpoint, methods=["POST"], include_in_schema=False)
        return router

    async def _events_endpoint(self, request: Request) -> Response:
        body = await request.body()
        assert self._verifier is not None
        bolt_request = to_async_bolt_request(request, body)
        refused = await self._verifier.refusal(bolt_request)
        if refused is not None:
            log.warning("slack: refused a request to %s (%s; timestamp %r, %d bytes) from %s", EVENTS_PATH,
                        refused, request.headers.get("x-slack-request-timestamp"), len(body),
                        request.client.host if request.client else "?")
            return JSONResponse({"error": "invalid request"}, status_code=401)
        if _answered_inline(body):
            response = await self._handler.handle(request)
            # No listener for this payload: still a delivery we accept, or Slack would retry it.
            return Response(status_code=200) if response.status_code == 404 else response
        # Events and clicks: stored first (the listener submits to the inbox), then the empty 200.
        try:
            resp = await self._app.async_dispatch(bolt_request)
        except Exception:
            log.exception("slack: handling an event failed")
            return Response(status_code=500)  # not stored: Slack delivers it again
        if resp.status >= 500:
            log.warning("slack: Bolt answered %s to a delivery", resp.status)
            return Response(status_code=500)
        return Response(status_code=200)
