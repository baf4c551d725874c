"""The one HTTP server: a FastAPI app served by uvicorn inside the bot's own event loop.

Every surface that needs HTTP (the web chat, Slack events, the Telegram webhook) hands its
routes to `HttpServer.include_router`; the server itself only adds `/healthz` and `/metrics`
and refuses request bodies over `max_body_bytes` before anything parses them.

Errors::

    HttpServerError          the server could not start (the address is taken, bad host)
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import importlib.metadata
import logging
import socket
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any

import uvicorn
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.http.api_docs import api_docs_router
from bot.observe.metrics import Metrics
from bot.settings import Settings

log = logging.getLogger(__name__)

HealthCheck = Callable[[], Awaitable[bool]]
MAX_BODY_BYTES = 64 * 1024
DRAIN_LIMIT_BYTES = 1024 * 1024  # past this, the connection is simply closed


class HttpServerError(Exception):
    def __init__(self, host: str, port: int, detail: str) -> None:
        super().__init__(f"cannot serve HTTP on {host}:{port}: {detail}")
        self.host = host
        self.port = port
        self.detail = detail


class BodyLimitMiddleware:
    """413 for request bodies over `limit` bytes, decided before the app sees the request.

    A declared Content-Length is checked up front; otherwise the body is read (at most
    `limit` bytes are ever held) and replayed to the app, so a chunked upload cannot make
    anything behind this middleware buffer more than the limit.
    """

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await _too_large(send, self.limit)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left before sending its body
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                await self._drain(receive, message, size)
                await _too_large(send, self.limit)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # later calls wait for the disconnect, as streams expect

        await self.app(scope, replay, send)

    async def _drain(self, receive: Receive, message: Message, size: int) -> None:
        """Discard the rest of a small-enough upload so the client can read the 413 cleanly."""
        while message.get("more_body", False) and size <= DRAIN_LIMIT_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _too_large(send: Send, limit: int) -> None:
    body = f'{{"detail":"request body over {limit} bytes"}}'.encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"geolocation=(self), camera=(), microphone=(), payment=(), usb=()"),
]


class SecurityHeadersMiddleware:
    """The headers every response carries (the page adds its Content-Security-Policy itself)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(n, v) for n, v in SECURITY_HEADERS if n not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: bot.py owns SIGINT/SIGTERM for the whole process."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class HttpServer:
    """One FastAPI app on settings.host:settings.port (port 0 picks a free port).

    `health_checks` name the things /healthz asks (e.g. {"store": store.ping}); surfaces add
    theirs with `add_health_check`. /healthz is 200 only when the server is up and every check
    says True within `health_timeout_s`.
    """

    def __init__(
        self,
        settings: Settings,
        metrics: Metrics,
        health_checks: Mapping[str, HealthCheck] | None = None,
        *,
        max_body_bytes: int = MAX_BODY_BYTES,
        health_timeout_s: float = 2.0,
        shutdown_timeout_s: float = 3.0,
    ) -> None:
        self._settings = settings
        self._metrics = metrics
        self._checks: dict[str, HealthCheck] = dict(health_checks or {})
        self._health_timeout_s = health_timeout_s
        self._shutdown_timeout_s = shutdown_timeout_s
        self._max_body_bytes = max_body_bytes
        # /docs: the OpenAPI page for the web API that others may build on, with its assets served
        # from here (bot.http.api_docs), so it works without internet
        self.app = FastAPI(
            title="travel-agent-bot", version=_version(), docs_url=None, redoc_url=None, openapi_url="/openapi.json",
            description="The web chat's API: send messages, answer questions, read a session's history and "
            "follow its Server-Sent Events. With BOT_WEB_TOKEN set, every /api request needs "
            "`Authorization: Bearer <token>` (or the cookie `POST /api/login` sets).",
        )
        self.app.include_router(api_docs_router(self.app.title))
        self.app.add_api_route("/healthz", self._healthz, methods=["GET"], include_in_schema=False)
        self.app.add_api_route("/metrics", self._metrics_route, methods=["GET"], include_in_schema=False)
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        self._port: int | None = None

    def include_router(self, router: APIRouter) -> None:
        if self._server is not None:
            raise RuntimeError("include routers before start()")
        self.app.include_router(router)

    def add_health_check(self, name: str, check: HealthCheck) -> None:
        self._checks[name] = check

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the server has not started")
        return self._port

    @property
    def base_url(self) -> str:
        host = self._settings.host
        if host in {"0.0.0.0", "", "::"}:
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.started and not self._server.should_exit

    def bind(self) -> None:
        """Take the address now (a taken port fails here, before anything else starts);
        `start()` serves on it later. Raises HttpServerError."""
        if self._socket is None:
            sock = self._bind(self._settings.host, self._settings.port)
            self._socket = sock
            self._port = int(sock.getsockname()[1])

    async def start(self) -> None:
        if self._task is not None:
            return
        self.bind()
        sock = self._socket
        assert sock is not None
        config = uvicorn.Config(
            SecurityHeadersMiddleware(BodyLimitMiddleware(self.app, self._max_body_bytes)),
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=int(max(1, self._shutdown_timeout_s)),
            ws="none",
        )
        server = _EmbeddedServer(config)
        self._server = server
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name="http-server")
        while not server.started:
            if self._task.done():
                exc = self._task.exception()
                self._task = None
                raise HttpServerError(self._settings.host, self.port, repr(exc))
            await asyncio.sleep(0.01)
        log.info("HTTP server listening on %s", self.base_url)

    async def stop(self) -> None:
        server, task = self._server, self._task
        if server is None or task is None:
            if self._socket is not None:  # bound, never served
                self._socket.close()
                self._socket = None
            return
        server.should_exit = True
        try:
            await asyncio.wait_for(task, timeout=self._shutdown_timeout_s + 2)
        except (TimeoutError, SystemExit) as exc:  # uvicorn exits via SystemExit on startup faults
            log.warning("HTTP server did not stop cleanly: %r", exc)
            server.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, SystemExit):
                await task
        finally:
            if self._socket is not None:
                self._socket.close()
            self._server = self._task = self._socket = None

    @staticmethod
    def _bind(host: str, port: int) -> socket.socket:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as exc:
            raise HttpServerError(host, port, str(exc)) from exc
        family, _, _, _, address = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            sock.close()
            raise HttpServerError(host, port, exc.strerror or str(exc)) from exc
        sock.set_inheritable(True)
        return sock

    async def _healthz(self) -> JSONResponse:
        results: dict[str, bool] = {"http": self.running}
        for name, check in self._checks.items():
            results[name] = await self._run_check(name, check)
        ok = all(results.values())
        body: dict[str, Any] = {"ok": ok, "checks": results, "unhealthy": [name for name, good in results.items() if not good]}
        return JSONResponse(body, status_code=200 if ok else 503)

    async def _run_check(self, name: str, check: HealthCheck) -> bool:
        try:
            return bool(await asyncio.wait_for(check(), timeout=self._health_timeout_s))
        except Exception as exc:  # a failing check is an unhealthy answer, not a 500
            log.warning("health check %s failed: %r", name, exc)
            return False

    async def _metrics_route(self, request: Request) -> Response:
        token = self._settings.web_token
        if token:  # with a token, the metrics need it too (Prometheus: `authorization: {credentials: ...}`)
            given = request.headers.get("authorization", "")
            if given[:7].lower() != "bearer " or not hmac.compare_digest(given[7:].strip().encode(), token.encode()):
                return Response(status_code=401, headers={"WWW-Authenticate": 'Bearer realm="tripbot"'})
        await self._metrics.refresh()
        return Response(self._metrics.render(), media_type=self._metrics.content_type)


def _version() -> str:
    try:
        return importlib.metadata.version("travel-agent-bot")
    except importlib.metadata.PackageNotFoundError:
        return "0"
