"""Assembly of the running bot: store, session manager, surfaces and the HTTP server.

bot.py chooses the model and the tools and calls `build_runtime`; tests call it too, with a
scripted model or small test tools, so the process they run is the real one.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from dataclasses import dataclass, field
from typing import Protocol

from agent_core.model import ChatModel
from bot.agent_factory import PromptBuilder, TravelAgentFactory
from bot.chat import Surface
from bot.metrics import Metrics
from bot.review import PlanReviewer
from bot.server import HttpServer
from bot.sessions import SessionManager
from bot.settings import Settings
from bot.store import SqliteStore, Store
from tools.collection import ToolCollection

log = logging.getLogger(__name__)


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

    async def start(self) -> None:
        await self.store.open()
        await self.manager.start()  # recovery first: surfaces are attached, inbound not yet open
        for adapter in self.adapters:
            await adapter.start()
        if self.server is not None:
            await self.server.start()

    async def stop(self) -> None:
        # Adapters first: open SSE streams and pollers close, so the server stops at once.
        for adapter in reversed(self.adapters):
            try:
                await adapter.stop()
            except Exception:
                log.warning("stopping %s failed", adapter.platform, exc_info=True)
        if self.server is not None:
            with contextlib.suppress(Exception):
                await self.server.stop()
        await self.manager.stop()
        await self.store.close()


def freeze_startup_heap() -> int:
    """Take everything alive once the bot has started (modules, classes, settings, caches: about
    90,000 objects) out of the garbage collector's full passes; return how many.

    A full pass walks every tracked object and holds the GIL throughout: with the startup
    objects in it, one cost 25-50 ms, and when it landed in a burst of chats it stalled every
    run and the store's writer thread at once (the 200-chat Telegram benchmark lost ~40 ms per
    chat to it). `gc.freeze()` is Python's documented remedy for long-running servers. Called by
    bot.py after `Runtime.start()`, not by `start()` itself: it changes the whole process, which
    a test suite building many runtimes in one interpreter must not have.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def make_store(settings: Settings) -> Store:
    """PostgreSQL when BOT_DB_URL is set (it wins over BOT_DB_PATH), else the SQLite file."""
    if settings.db_url:
        from bot.store.postgres import PostgresStore  # asyncpg is loaded only when used

        return PostgresStore(settings.db_url, pool_max=settings.db_pool_max)
    return SqliteStore(settings.db_path)


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
) -> Runtime:
    store = make_store(settings)
    metrics = metrics or Metrics()
    factory = TravelAgentFactory(model=model, tools=tools, settings=settings, prompt=prompt)
    manager = SessionManager(store, factory, settings, metrics=metrics, reviewer=reviewer)
    adapters: list[Adapter] = list(extra_surfaces or [])
    server = HttpServer(settings, metrics, {"store": store.ping}) if serve_http else None
    if server is not None:
        from adapters.web import WebAdapter

        web = WebAdapter(settings, manager)
        adapters.append(web)
        server.include_router(web.router())
        server.add_health_check("web", web.healthy)
    if settings.telegram_bot_token:
        from adapters.telegram import (
            TelegramAdapter,  # python-telegram-bot is loaded only when used
        )

        telegram = TelegramAdapter(settings, manager)
        adapters.append(telegram)
        if server is not None and settings.telegram_webhook_url:
            server.include_router(telegram.router())
    if settings.slack_bot_token:
        from adapters.slack import SlackAdapter

        slack = SlackAdapter(settings, manager)
        adapters.append(slack)
        if server is not None and not settings.slack_app_token:
            server.include_router(slack.router())
    for adapter in adapters:
        manager.attach(adapter)
    return Runtime(settings, store, metrics, manager, server, adapters)
