"""The real runtime behind the web chat for tests and the SSE benchmark.

SqliteStore + SessionManager + WebAdapter + HttpServer on 127.0.0.1:0, driven by a scripted
model (or any model given) that plays one trip conversation: ask which day (with options), then submit a plan for
the chosen day. Nothing of ours is replaced; only the model is scripted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.web import WebAdapter
from agent_core.llm import LLM
from agent_core.model import ChatModel
from bot.http.server import HttpServer
from bot.observe.metrics import Metrics
from bot.run.agent_factory import TravelAgentFactory
from bot.run.review import PlanReviewer
from bot.sessions import SessionManager
from bot.settings import Settings
from bot.store import SqliteStore
from tests.scripted_trip import ScriptedTrip
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

# the text that goes with the question call: the page shows it as a step
ASK_NOTE = "I need the travel date first."


def web_model(**fields: Any) -> ScriptedTrip:
    """The scripted trip as the web tests and the SSE benchmark drive it."""
    return ScriptedTrip(name="scripted-web-trip", ask_note=ASK_NOTE, **fields)


@dataclass
class WebStack:
    settings: Settings
    store: SqliteStore
    manager: SessionManager
    web: WebAdapter
    server: HttpServer
    model: ChatModel

    @property
    def base_url(self) -> str:
        return self.server.base_url


def web_settings(db_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "BOT_DB_PATH": str(db_path), "BOT_HOST": "127.0.0.1", "BOT_PORT": 0, "BOT_VALIDATE": "off",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@asynccontextmanager
async def web_stack(
    db_path: Path,
    *,
    model: ChatModel | None = None,
    keepalive_s: float = 15.0,
    settings: Settings | None = None,
    reviewer: PlanReviewer | None = None,
    tools: ToolCollection | None = None,
    adapter: type[WebAdapter] = WebAdapter,
) -> AsyncIterator[WebStack]:
    settings = settings or web_settings(db_path)
    model = model if model is not None else web_model()
    metrics = Metrics()
    store = SqliteStore(settings.db_path)
    await store.open()
    factory = TravelAgentFactory(
        model=model,
        tools=tools or ToolCollection([AskHuman(), SubmitPlan(), Terminate()]),
        settings=settings,
        prompt=lambda lang, now, tz, loc: f"You plan trips. Now: {now:%Y-%m-%d %H:%M} {tz}.",
    )
    manager = SessionManager(store, factory, settings, metrics, reviewer=reviewer)
    web = adapter(settings, manager, keepalive_s=keepalive_s)
    manager.attach(web)
    server = HttpServer(settings, metrics, {"store": store.ping})
    server.add_health_check("web", web.healthy)
    server.include_router(web.router())
    await manager.start()
    await web.start()
    await server.start()
    try:
        yield WebStack(settings, store, manager, web, server, model)
    finally:
        await web.stop()
        await server.stop()
        await manager.stop()
        await store.close()
        if isinstance(model, LLM):  # the stack runs the client it was given until it stops
            await model.aclose()

