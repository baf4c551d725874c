"""The rubric pass: a Validator agent (a ToolCallAgent with the travel tools, no ask_human) that
re-checks the reply with the tools and ends with one of the six labels."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent_core.agents import ToolCallAgent
from agent_core.events import AnswerReady, RunFailed, ToolCalled
from agent_core.memory import Memory
from agent_core.model import ChatModel, TokenUsage
from agent_core.schema import Message
from agent_core.validator.errors import RubricUnavailable
from agent_core.validator.labels import Label, parse_label
from agent_core.validator.prompt import validator_prompt
from tools.base import ToolContext
from tools.collection import ToolCollection

# The Validator must not talk to the person, nor end a planner's run.
NOT_FOR_VALIDATOR = ("ask_human", "submit_plan", "terminate")
_VERDICT_LINE = re.compile(r"^\s*(?:\**\s*)?(?:结论|判定|评价|verdict|final verdict)\s*[:：].*$", re.I | re.M)
_NUMBERING = re.compile(r"^(?:\d{1,2}|[一二三四五六七八九十])[.、)）:：]\s*")
MAX_REASONS = 8


@dataclass(frozen=True, slots=True)
class RubricResult:
    label: Label
    reasons: tuple[str, ...]
    text: str  # the Validator's whole final reply
    tool_calls: int


class ValidatorAgent(ToolCallAgent):
    name = "validator"

    @classmethod
    def create(
        cls, *, model: ChatModel, tools: ToolCollection, context: ToolContext, input_text: str, max_steps: int = 12,
        usage: TokenUsage | None = None, **kwargs: Any,
    ) -> ValidatorAgent:
        """`tools`: the travel tool set (planner-only tools are removed); `input_text` from
        reference.validation_input()."""
        return cls(
            model=model, tools=tools.without(*NOT_FOR_VALIDATOR), system_prompt=validator_prompt(context.lang),
            context=context, memory=Memory([Message.user(input_text)]), max_steps=max_steps, usage=usage, **kwargs,
        )

    async def grade(self) -> RubricResult:
        """Run to the end and read the verdict; RubricUnavailable when there is none."""
        calls = 0
        text: str | None = None
        async for event in self.run():
            if isinstance(event, ToolCalled):
                calls += 1
            elif isinstance(event, RunFailed):
                raise RubricUnavailable(event.reason, event.message)
            elif isinstance(event, AnswerReady):
                text = event.text
        if text is None:
            raise RubricUnavailable("no_answer", f"the validator stopped in state {self.state.value}")
        label = parse_label(text)
        if label is None:
            raise RubricUnavailable("no_label", text[:300])
        return RubricResult(label, reasons_of(text), text, calls)


def reasons_of(text: str) -> tuple[str, ...]:
    """The reasoning lines of a verdict reply, without the verdict line itself."""
    body = _VERDICT_LINE.sub("", text)
    lines = [_NUMBERING.sub("", ln.strip(" -*•\t")) for ln in body.splitlines()]
    return tuple(ln for ln in lines if ln and parse_label(ln) is None)[:MAX_REASONS]
