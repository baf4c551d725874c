"""Builds the agent of a run from its stored conversation: the TravelAgent (planner role)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from opentelemetry.trace import Tracer

from agent_core.agents import ToolCallAgent
from agent_core.memory import Memory
from agent_core.model import ChatModel
from agent_core.prompts.request_note import RequestNote
from agent_core.travel_agent import TravelAgent
from bot.run.records import RunSpec
from bot.settings import Settings
from tools.base import ToolContext
from tools.collection import ToolCollection

PromptBuilder = Callable[[str, datetime, str, "str | None"], str]


class TravelAgentFactory:
    """One model and one tool set for every run; the per-run parts come from the RunSpec."""

    def __init__(self, *, model: ChatModel, tools: ToolCollection, settings: Settings, prompt: PromptBuilder,
                 tracer: Tracer | None = None, requests: RequestNote | None = None) -> None:
        self.tracer = tracer
        self.requests = requests  # the request state shown to a real model on every turn
        self.model = model
        self.tools = tools
        self.settings = settings
        self.prompt = prompt

    def build(self, spec: RunSpec) -> ToolCallAgent:
        loc = spec.location
        location_text = None
        if loc is not None:
            location_text = loc.label or f"{loc.latitude:.5f}, {loc.longitude:.5f}"
        context = ToolContext(
            tool_call_id="", now=spec.now, lang=spec.lang, location=loc, home_city=self.settings.home_city,
            travellers=spec.travellers,
        )
        agent = TravelAgent(
            model=self.model,
            tools=self.tools,
            system_prompt=self.prompt(spec.lang, spec.now, self.settings.timezone, location_text),
            context=context,
            memory=Memory(spec.messages, max_messages=self.settings.history_messages),
            max_steps=self.settings.max_steps,
            steps_taken=spec.steps_taken,
            usage=spec.usage,
            tracer=self.tracer,
        )
        agent.requests = self.requests
        return agent
