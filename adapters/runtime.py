"""Assembly of the running bot: store, session manager, surfaces and the HTTP server.

bot.py chooses the model and the tools and calls `build_runtime`; tests call it too, with a
scripted model or small test tools, so the process they run is the real one.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from opentelemetry.trace import Tracer

from adapters.startup import HINTS, STARTUP_TIMEOUT_S, StartupError, one_line, within
from adapters.web.relay import SharedEvents
from agent_core.model import ChatModel
from agent_core.prompts.request_note import RequestNote
from bot.cluster.ownership import LocalOwnership, Ownership
from bot.http.admin import AdminPage
from bot.http.server import HttpServer, HttpServerError
from bot.observe.log_context import ChatLogContext
from bot.observe.metrics import Metrics
from bot.observe.model_prices import PriceTable
from bot.ratelimit import Buckets, Limits, LocalBuckets
from bot.run.agent_factory import PromptBuilder, TravelAgentFactory
from bot.run.review import PlanReviewer
from bot.sessions import SessionManager
from bot.settings import Settings
from bot.store import SqliteStore, Store
from bot.store.base import SessionLock
from bot.surface import Surface
from tools.collection import ToolCollection

log = logging.getLogger(__name__)

TELEGRAM_POLLER_LOCK = 0x7472_6970_7431  # advisory lock key: one Telegram poller per database


class Adapter(Surface, Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...


@dataclass
class Runtime:
    settings: Settings
    store: Store
    metrics: Metrics
    manager: SessionManager
    server: HttpServer | None
    adapters: list[Adapter] = field(default_factory=list)

    async def start(self, timeout_s: float = STARTUP_TIMEOUT_S, *,
                    before_serving: Callable[[], object] | None = None) -> None:
        """Start everything, or raise StartupError (one line: what failed, which setting to
        look at) after stopping whatever had started. Each surface that reaches an outside
        service gets `timeout_s` to do so. `before_serving` runs once the store is open and
        before anything takes work (recovery, leases, webhooks, polling, the HTTP server): bot.py
        freezes its startup heap there (`freeze_startup_heap`)."""
        try:
            await self._start(timeout_s, before_serving)
        except BaseException:
            await self.stop()
            raise

    async def _start(self, timeout_s: float, before_serving: Callable[[], object] | None) -> None:
        if self.server is not None:  # a taken port fails first, before anything is reached
            try:
                self.server.bind()
            except HttpServerError as exc:
                raise StartupError(f"{exc} (set BOT_PORT to a free port, or stop the process that holds it)") from None
        try:
            await self.store.open()
        except (OSError, sqlite3.Error) as exc:
            raise StartupError(f"cannot open the database {self.settings.db_path}: {one_line(exc)} (check BOT_DB_PATH)") from None
        if before_serving is not None:
            before_serving()
        await self.manager.start()  # recovery first: surfaces are attached, inbound not yet open
        for adapter in self.adapters:
            hint = HINTS.get(adapter.platform, "check its settings")
            try:
                await within(adapter.platform, adapter.start(), timeout_s, hint)
            except StartupError as exc:
                raise StartupError(self._redact(str(exc))) from None
            except Exception as exc:
                raise StartupError(self._redact(f"{adapter.platform} could not start: {one_line(exc)} ({hint})")) from None
        if self.server is not None:
            try:
                await self.server.start()
            except HttpServerError as exc:
                raise StartupError(str(exc)) from None

    def _redact(self, line: str) -> str:
        """Tokens never reach the terminal (python-telegram-bot quotes a refused token)."""
        s = self.settings
        for secret in (s.telegram_bot_token, s.slack_bot_token, s.slack_app_token, s.slack_signing_secret,
                       s.openai_api_key, s.web_token, s.admin_token):
            if secret:
                line = line.replace(secret, "<redacted>")
        return line

    async def stop(self, timeout_s: float = 5.0) -> None:
        """Stop everything, also after a partial start; each part gets `timeout_s`."""
        # Adapters first: open SSE streams and pollers close, so the server stops at once.
        for adapter in reversed(self.adapters):
            await self._stop_part(adapter.platform, adapter.stop(), timeout_s)
        if self.server is not None:
            await self._stop_part("http", self.server.stop(), timeout_s)
        await self._stop_part("sessions", self.manager.stop(), timeout_s)
        await self._stop_part("store", self.store.close(), timeout_s)

    @staticmethod
    async def _stop_part(name: str, stopping: Awaitable[None], timeout_s: float) -> None:
        try:
            await asyncio.wait_for(stopping, timeout_s)
        except Exception:
            log.warning("stopping %s failed", name, exc_info=True)


def freeze_startup_heap() -> int:
    """Take everything alive once the bot is built (modules, classes, settings, caches: about
    90,000 objects) out of the garbage collector's full passes; return how many.

    A full pass walks every tracked object and holds the GIL throughout: with the startup
    objects in it, one cost 25-50 ms, and when it landed in a burst of chats it stalled every
    run and the store's writer thread at once (the 200-chat Telegram benchmark lost ~40 ms per
    chat to it). `gc.freeze()` is Python's documented remedy for long-running servers. bot.py
    passes it to `Runtime.start(before_serving=...)`, so its own full pass (170 ms on a slow
    2-core machine) is over before the process answers /healthz, takes a lease or is sent a
    webhook; `start()` does not call it by itself: it changes the whole process, which a test
    suite building many runtimes in one interpreter must not have.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def make_store(settings: Settings) -> Store:
    """PostgreSQL when BOT_DB_URL is set (it wins over BOT_DB_PATH), else the SQLite file."""
    if settings.db_url:
        from bot.store.postgres.connect import IDLE_IN_TRANSACTION_TIMEOUT_S
        from bot.store.postgres.store import PostgresStore  # asyncpg is loaded only when used

        # a process stopped inside a transaction must not block a takeover for longer than a lease
        idle_s = max(0.5, min(IDLE_IN_TRANSACTION_TIMEOUT_S, settings.lease_s / 3))
        return PostgresStore(settings.db_url, pool_max=settings.db_pool_max, idle_in_transaction_s=idle_s)
    return SqliteStore(settings.db_path)


def make_ownership(settings: Settings, store: Store) -> Ownership:
    """Leases when the store is PostgreSQL (several processes may share it), else one process."""
    if settings.db_url:
        from bot.cluster.leases import LeasedOwnership
        from bot.store.postgres.store import PostgresStore

        assert isinstance(store, PostgresStore)
        return LeasedOwnership(store, settings.lease_s)
    return LocalOwnership()


def make_buckets(settings: Settings, store: Store) -> Buckets:
    """Rate-limit buckets: in the database every process shares (PostgreSQL), else in this process."""
    if settings.db_url:
        from bot.store.postgres.rate_buckets import PgBuckets
        from bot.store.postgres.store import PostgresStore

        assert isinstance(store, PostgresStore)
        return PgBuckets(store)
    return LocalBuckets()


def shared_web_events(settings: Settings, store: Store) -> SharedEvents | None:
    """With several processes the web page's events travel through PostgreSQL."""
    if settings.db_url:
        from bot.store.postgres.leases import new_owner_id
        from bot.store.postgres.store import PostgresStore
        from bot.store.postgres.web_events import PgWebEvents

        assert isinstance(store, PostgresStore)
        return PgWebEvents(store, new_owner_id())
    return None


def process_count(settings: Settings, store: Store) -> Callable[[], Awaitable[int]] | None:
    """With several processes, how many serve the database now: they share Telegram's bot-wide
    send budget (adapters.telegram.budget)."""
    if settings.db_url:
        from bot.store.postgres.store import PostgresStore

        assert isinstance(store, PostgresStore)
        return store.bot_processes
    return None


def poll_turn(settings: Settings, store: Store) -> SessionLock | None:
    """With several processes only one polls Telegram: the holder of a PostgreSQL advisory lock."""
    if settings.db_url:
        from bot.store.postgres.session_lock import PgSessionLock

        return PgSessionLock(settings.db_url, TELEGRAM_POLLER_LOCK, retry_s=min(1.0, settings.lease_s / 3))
    return None


def build_runtime(
    settings: Settings,
    *,
    model: ChatModel,
    tools: ToolCollection,
    prompt: PromptBuilder,
    reviewer: PlanReviewer | None = None,
    serve_http: bool = True,
    extra_surfaces: list[Adapter] | None = None,
    metrics: Metrics | None = None,
    prices: PriceTable | None = None,
    tracer: Tracer | None = None,
    logs: ChatLogContext | None = None,
    requests: RequestNote | None = None,
) -> Runtime:
    """`requests`: the request state shown to a real model on each turn (agent_core.prompts.request_note)."""
    store = make_store(settings)
    ownership = make_ownership(settings, store)
    metrics = metrics or Metrics()
    limits = Limits(settings, make_buckets(settings, store))  # one set of limits for every surface and process
    factory = TravelAgentFactory(model=model, tools=tools, settings=settings, prompt=prompt, tracer=tracer,
                                 requests=requests)
    manager = SessionManager(store, factory, settings, metrics=metrics, reviewer=reviewer, limits=limits,
                             ownership=ownership, prices=prices or PriceTable(settings.llm_prices), tracer=tracer,
                             logs=logs)
    adapters: list[Adapter] = list(extra_surfaces or [])
    server = HttpServer(settings, metrics, {"store": store.ping}) if serve_http else None
    if server is not None:
        from adapters.web import WebAdapter

        web = WebAdapter(settings, manager, shared=shared_web_events(settings, store))
        adapters.append(web)
        server.include_router(web.router())
        server.add_health_check("web", web.healthy)
        if settings.admin_token:
            server.include_router(AdminPage(settings, store, manager.redeliver, outages=manager.platform_outages).router())
    if settings.telegram_bot_token:
        from adapters.telegram import (
            TelegramAdapter,  # python-telegram-bot is loaded only when used
        )

        telegram = TelegramAdapter(settings, manager, poll_turn=poll_turn(settings, store), owns=manager.holds,
                                   processes=process_count(settings, store))
        adapters.append(telegram)
        if server is not None:
            server.add_health_check("telegram", telegram.healthy)
            if settings.telegram_webhook_url:
                server.include_router(telegram.router())
    if settings.slack_bot_token:
        from adapters.slack import SlackAdapter

        slack = SlackAdapter(settings, manager)
        adapters.append(slack)
        if server is not None:
            server.add_health_check("slack", slack.healthy)
            if not settings.slack_app_token:
                server.include_router(slack.router())
    for adapter in adapters:
        manager.attach(adapter)
    return Runtime(settings, store, metrics, manager, server, adapters)
