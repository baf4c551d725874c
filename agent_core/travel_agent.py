"""TravelAgent: the seed's Manus role, a ToolCallAgent with the travel prompt and tool set.

The prompt carries the run's clock, so build it from the time the run *started* (kept with the
session), also when a run is resumed after a restart: "下周五" must mean the same Friday before
and after the pause.

A plan written only as text (rides or hotels in the reply after the run has searched, and no
submit_plan since the person last spoke) is not taken as the answer at once: the model is asked once more to call
submit_plan, so the plan reaches the person, and the Validator, as structured data. The note
(a `[review]` turn, never shown to the person) takes the draft's place in the conversation and
quotes it. A model that writes text again is taken at its word; the Validator then reads the
plan from the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_core.agents.toolcall import ToolCallAgent, visible_text
from agent_core.model import ChatModel
from agent_core.notes import bot_note, origin_of
from agent_core.prompts.request_note import RequestNote
from agent_core.prompts.travel import build_system_prompt
from agent_core.schema import Message, Origin, Role
from agent_core.validator.prose import read_text_plan
from tools.ask_human import AskHuman
from tools.base import BaseTool, ToolContext
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

SUBMIT_PLAN = "submit_plan"
_NOT_SEARCHES = frozenset({"ask_human", "submit_plan", "terminate", "current_location"})
SUBMIT_AGAIN = (
    "[review] Your reply gives a trip plan as text only. Call submit_plan now: `summary` is that answer for "
    "the person, `plan` the same trip as structured data, built only from the tool results above (train and flight "
    "numbers, hotel and POI ids exactly as the tools returned them)."
)
DRAFT_HEAD = "Your reply was:"


def travel_toolset(travel_tools: Iterable[BaseTool[Any]]) -> ToolCollection:
    """The travel tools plus ask_human, submit_plan and terminate."""
    return ToolCollection([*travel_tools, AskHuman(), SubmitPlan(), Terminate()])


class TravelAgent(ToolCallAgent):
    name = "travel"
    requests: RequestNote | None = None  # the request state shown to the model (None: the rules only)

    def prompt_for_turn(self) -> str:
        """The system prompt with the trip on the table as the person's words make it so far."""
        note = self.requests.text(self.memory.messages, self.context.now.date()) if self.requests else None
        return f"{self.system_prompt}\n\n{note}" if note else self.system_prompt

    @classmethod
    def create(
        cls,
        *,
        model: ChatModel,
        tools: ToolCollection,
        context: ToolContext,
        timezone: str,
        location_text: str | None = None,
        requests: RequestNote | None = None,
        **kwargs: Any,
    ) -> TravelAgent:
        """`tools` from travel_toolset(); `context.now` is the run's start time in `timezone`."""
        prompt = build_system_prompt(context.lang, context.now, timezone, location_text)
        agent = cls(model=model, tools=tools, system_prompt=prompt, context=context, **kwargs)
        agent.requests = requests
        return agent

    def follow_up(self, reply: Message) -> Message | None:
        if self.tools.get(SUBMIT_PLAN) is None or not plan_as_text_only(self.memory.messages):
            return None
        text = visible_text(reply.content)
        if read_text_plan(text, self.context.now.date()).empty:
            return None
        return bot_note(f"{SUBMIT_AGAIN}\n\n{DRAFT_HEAD}\n{text}", Origin.NUDGE)


def plan_as_text_only(before: list[Message]) -> bool:
    """True when the run has searched (a travel tool answered: there are results to build a
    plan from), submit_plan was not called since the last user message, and that message is not
    already this agent's request to call it (asked once, never twice)."""
    searched = any(m.role is Role.TOOL and m.name not in _NOT_SEARCHES and not (m.content or "").startswith("Error:")
                   for m in before)
    if not searched:
        return False
    for m in reversed(before):
        if m.role is Role.USER:  # a nudge stored before origins existed starts with SUBMIT_AGAIN
            return not (origin_of(m) is Origin.NUDGE or (m.content or "").startswith(SUBMIT_AGAIN))
        if m.role is Role.ASSISTANT and any(tc.function.name == SUBMIT_PLAN for tc in m.tool_calls or ()):
            return False
    return True
