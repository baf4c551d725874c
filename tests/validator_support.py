"""Test support for the Validator: the real sandbox, its tools, and the offline planner run to a plan."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from agent_core.agents import ToolCallAgent
from agent_core.events import AnswerReady
from agent_core.memory import Memory
from agent_core.offline.planner import OfflinePlanner
from agent_core.prompts.travel import build_system_prompt
from agent_core.schema import Function, Message, ToolCall
from agent_core.validator.evidence import RunEvidence
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
    return (await offline_run(sandbox, request, now)).plan


@dataclass(frozen=True, slots=True)
class OfflineRun:
    plan: TripPlan | None
    text: str  # the answer the person reads
    messages: list[Message]  # the whole conversation: the request, the tool calls and their results


async def offline_run(sandbox: Sandbox, request: str, now: datetime) -> OfflineRun:
    """The offline planner run to its answer on the sandbox, with the conversation it had."""
    lang = lang_of(request)
    agent = ToolCallAgent(
        model=OfflinePlanner(sandbox.gazetteer), tools=sandbox.tools,
        system_prompt=build_system_prompt(lang, now, TZ, None), context=ToolContext(tool_call_id="", now=now, lang=lang),
        memory=Memory([Message.user(request)]), max_steps=12,
    )
    plan, text = None, ""
    async for event in agent.run():
        if isinstance(event, AnswerReady):
            plan, text = event.plan, event.text
    return OfflineRun(plan, text, list(agent.memory.messages))


async def grounded_messages(sandbox: Sandbox, request: str, plan: TripPlan, now: datetime) -> list[Message]:
    """The offline planner's conversation for `request`, plus a poi_search for each sight of
    `plan` it did not search (corpus plans made by an older planner): every item of a correct
    plan then comes from a tool result of the conversation."""
    messages = (await offline_run(sandbox, request, now)).messages
    seen = RunEvidence.from_messages(messages)
    for k, visit in enumerate(plan.visits):
        if visit.poi_id in seen.pois:
            continue
        args = {"query": visit.name, "city": visit.city}
        call = ToolCall(id=f"call_extra_{k}", function=Function(name="poi_search", arguments=json.dumps(args, ensure_ascii=False)))
        result = await sandbox.tools.execute("poi_search", args, ToolContext(tool_call_id=call.id, now=now))
        messages += [Message.assistant(None, [call]), Message.tool(result.observation(), tool_call_id=call.id, name="poi_search")]
    return messages


def search_calls(messages: list[Message]) -> list[tuple[str, dict[str, Any]]]:
    """The travel tool calls of a conversation (name, arguments), to replay them in a script."""
    return [(tc.function.name, tc.parsed_arguments()) for m in messages for tc in m.tool_calls or ()
            if tc.function.name not in ("ask_human", "submit_plan", "terminate")]


def run_clock(day: str) -> datetime:
    return datetime.fromisoformat(f"{day}T09:00").replace(tzinfo=ZoneInfo(TZ))
