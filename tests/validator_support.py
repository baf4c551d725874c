"""Test support for the Validator: the real sandbox, its tools, and the offline planner run to a plan."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from agent_core.agents import ToolCallAgent
from agent_core.events import AnswerReady
from agent_core.memory import Memory
from agent_core.offline.planner import OfflinePlanner
from agent_core.prompts.travel import build_system_prompt
from agent_core.schema import Message
from agent_core.validator.provider_facts import ProviderFacts
from tools.ask_human import AskHuman
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.plan import TripPlan
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate
from tools.travel import Gazetteer, SandboxProvider
from tools.travel.factory import build_sandbox_tools

TZ = "Asia/Shanghai"


@dataclass(frozen=True, slots=True)
class Sandbox:
    gazetteer: Gazetteer
    provider: SandboxProvider
    tools: ToolCollection  # the travel tools + ask_human, submit_plan, terminate (as bot.py has them)

    def facts(self) -> ProviderFacts:
        return ProviderFacts(self.provider, self.gazetteer)


def load_sandbox() -> Sandbox:
    g = Gazetteer.load()
    sb = SandboxProvider(g)
    travel = build_sandbox_tools(g, sb)
    return Sandbox(g, sb, ToolCollection([*travel, AskHuman(), SubmitPlan(), Terminate()]))


def lang_of(text: str) -> str:
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"


async def offline_plan(sandbox: Sandbox, request: str, now: datetime) -> TripPlan | None:
    """The offline planner's plan for a complete request (None when it asks or gives up)."""
    lang = lang_of(request)
    agent = ToolCallAgent(
        model=OfflinePlanner(sandbox.gazetteer), tools=sandbox.tools,
        system_prompt=build_system_prompt(lang, now, TZ, None), context=ToolContext(tool_call_id="", now=now, lang=lang),
        memory=Memory([Message.user(request)]), max_steps=12,
    )
    plan = None
    async for event in agent.run():
        if isinstance(event, AnswerReady):
            plan = event.plan
    return plan


def run_clock(day: str) -> datetime:
    return datetime.fromisoformat(f"{day}T09:00").replace(tzinfo=ZoneInfo(TZ))
