"""The model interface shared by the LLM client and the offline planner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from agent_core.schema import Message

ToolChoice = Literal["none", "auto", "required"]


@dataclass
class TokenUsage:
    """Token totals of one session (never shared between sessions)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    errors: int = 0
    by_call: list[tuple[int, int]] = field(default_factory=list, repr=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, prompt: int, completion: int) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.calls += 1
        if len(self.by_call) < 256:
            self.by_call.append((prompt, completion))


class ChatModel(Protocol):
    """What an agent needs from a model: one assistant turn for a conversation.

    `messages` starts with the system prompt(s). The returned message is an assistant
    message whose `tool_calls` are already recovered from text where the model wrote them
    there, and whose content has `<think>` blocks removed.
    """

    name: str

    async def ask_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> Message: ...


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    """A model that can also hand out its turn as it is written.

    `stream_tool` yields the visible text in pieces (str: no think blocks, no tool-call text)
    and, last, the whole assistant turn (a Message, as `ask_tool` would return it). Cancelling
    the consumer cancels the model call.
    """

    def stream_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> AsyncIterator[str | Message]: ...
