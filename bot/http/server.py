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

from bot.http.api_docs import api_docs_router
from bot.http.middleware import MAX_BODY_BYTES, BodyLimitMiddleware, SecurityHeadersMiddleware
from bot.observe.metrics import Metrics
from bot.settings import Settings

log = logging.getLogger(__name__)

HealthCheck = Callable[[], Awaitable[bool]]
class HttpServerError(Exception):
    def __init__(self, host: str, port: int, detail: str) -> None:
        super().__init__(f"cannot serve HTTP on {host}:{port}: {detail}")
        self.host = host
        self.port = port
        self.detail = detail


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
