"""The real runtime behind the web chat for tests and the SSE benchmark.

SqliteStore + SessionManager + WebAdapter + HttpServer on 127.0.0.1:0, driven by a scripted
model that plays one trip conversation: ask which day (with options), then submit a plan for
the chosen day. Nothing of ours is replaced; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.web import WebAdapter
from agent_core.model import TokenUsage, ToolChoice
from agent_core.schema import Function, Message, Role, ToolCall
from bot.agent_factory import TravelAgentFactory
from bot.metrics import Metrics
from bot.server import HttpServer
from bot.sessions import SessionManager
from bot.settings import Settings
from bot.store import SqliteStore
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

QUESTION_EN = "Which day do you want to leave?"
QUESTION_ZH = "你想哪天出发？"
DAYS = ("2025-05-01", "2025-05-02")


def trip_plan(day: str) -> dict[str, Any]:
    nxt = f"{day[:-2]}{int(day[-2:]) + 1:02d}"
    return {
        "title": "Beijing → Shanghai",
        "origin_city": "北京",
        "destination_city": "上海",
        "start_date": day,
        "end_date": nxt,
        "legs": [
            {
                "kind": "train", "number": "G1", "origin": "北京南", "destination": "上海虹桥",
                "depart": f"{day} 07:00", "arrive": f"{day} 11:29", "seat": "二等座", "price": 553,
            }
        ],
        "stays": [
            {
                "hotel_id": "h-sh-1", "name": "Bund Riverside Hotel", "city": "上海", "checkin_date": day,
                "checkout_date": nxt, "nights": 1, "price_per_night": 480, "total": 480, "breakfast": True,
            }
        ],
        "visits": [{"poi_id": "p-1", "name": "The Bund", "city": "上海", "date": day, "start": "15:00", "duration_min": 90}],
        "total_cost": 1033,
        "alternatives": ["G3 at 09:00 if G1 is sold out"],
        "notes": ["Bring your ID card for the train."],
        "data_source": "sandbox",
    }


@dataclass
class ScriptedTripModel:
    """Turn 1: ask_human with the day options. Turn 2: submit_plan for the answered day.

    `latency_s` delays every reply (like a real model); `gate`, when set, holds every reply
    until it is opened, so a test can act while a run is provably mid-step.
    """

    name: str = "scripted-trip"
    latency_s: float = 0.0
    gate: asyncio.Event | None = None
    calls: int = 0
    held: asyncio.Event = field(default_factory=asyncio.Event)

    async def ask_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> Message:
        self.calls += 1
        if self.gate is not None:
            self.held.set()
            await self.gate.wait()
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if usage is not None:
            usage.add(100, 20)
        answers = [m for m in messages if m.role is Role.TOOL and m.name == "ask_human"]
        first_user = next((m.content or "" for m in messages if m.role is Role.USER), "")
        zh = any("\u4e00" <= ch <= "\u9fff" for ch in first_user)
        if not answers:
            return _call(
                "ask_human",
                {"inquire": QUESTION_ZH if zh else QUESTION_EN, "options": list(DAYS)},
                content="I need the travel date first.",
            )
        day = next((d for d in DAYS if d in (answers[-1].content or "")), DAYS[0])
        summary = f"Here is your trip on {day}: G1 to Shanghai, one night at the Bund Riverside Hotel."
        return _call("submit_plan", {"summary": summary, "plan": trip_plan(day)})


def _call(name: str, arguments: dict[str, Any], content: str | None = None) -> Message:
    call = ToolCall(id=f"call_{uuid.uuid4().hex[:16]}", function=Function(name=name, arguments=json.dumps(arguments)))
    return Message.assistant(content, [call])


@dataclass
class WebStack:
    settings: Settings
    store: SqliteStore
    manager: SessionManager
    web: WebAdapter
    server: HttpServer
    model: ScriptedTripModel

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
    model: ScriptedTripModel | None = None,
    keepalive_s: float = 15.0,
    settings: Settings | None = None,
) -> AsyncIterator[WebStack]:
    settings = settings or web_settings(db_path)
    model = model or ScriptedTripModel()
    metrics = Metrics()
    store = SqliteStore(settings.db_path)
    await store.open()
    factory = TravelAgentFactory(
        model=model,
        tools=ToolCollection([AskHuman(), SubmitPlan(), Terminate()]),
        settings=settings,
        prompt=lambda lang, now, tz, loc: f"You plan trips. Now: {now:%Y-%m-%d %H:%M} {tz}.",
    )
    manager = SessionManager(store, factory, settings, metrics)
    web = WebAdapter(settings, manager, keepalive_s=keepalive_s)
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

