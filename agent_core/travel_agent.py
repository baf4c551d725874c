"""TravelAgent: the seed's Manus role, a ToolCallAgent with the travel prompt and tool set.

The prompt carries the run's clock, so build it from the time the run *started* (kept with the
session), also when a run is resumed after a restart: "下周五" must mean the same Friday before
and after the pause.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_core.agents.toolcall import ToolCallAgent
from agent_core.model import ChatModel
from agent_core.prompts.travel import build_system_prompt
from tools.ask_human import AskHuman
from tools.base import BaseTool, ToolContext
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate


def travel_toolset(travel_tools: Iterable[BaseTool[Any]]) -> ToolCollection:
    """The travel tools plus ask_human, submit_plan and terminate."""
    return ToolCollection([*travel_tools, AskHuman(), SubmitPlan(), Terminate()])


class TravelAgent(ToolCallAgent):
    name = "travel"

    @classmethod
    def create(
        cls,
        *,
        model: ChatModel,
        tools: ToolCollection,
        context: ToolContext,
        timezone: str,
        location_text: str | None = None,
        **kwargs: Any,
    ) -> TravelAgent:
        """`tools` from travel_toolset(); `context.now` is the run's start time in `timezone`."""
        prompt = build_system_prompt(context.lang, context.now, timezone, location_text)
        return cls(model=model, tools=tools, system_prompt=prompt, context=context, **kwargs)
