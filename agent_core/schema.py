"""Typed, JSON-serialisable conversation data: roles, messages, tool calls, agent state."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class AgentState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    WAITING = "waiting"  # paused on ask_human until the person answers
    FINISHED = "finished"
    ERROR = "error"


class Origin(StrEnum):
    """Who wrote a user-role message: a person, or the bot writing a note to its own planner.

    Models only know four roles, so the bot's own notes (a Validator's findings sent back for a
    re-plan, a nudge to submit the plan, a sign-off's rejection passed on) travel as user
    messages; their origin keeps them from being read as the traveller's words.
    """

    PERSON = "person"  # a person's words (the default)
    REVIEW = "review"  # the Validator's findings, asking the planner for another round
    NUDGE = "nudge"  # the agent loop asking the model for one more turn (e.g. the structured plan)
    SIGNOFF = "signoff"  # an approver's decision passed on to the planner


class Sender(BaseModel):
    """Who said a message: the platform's user id and the names people know them by."""

    user_id: str
    name: str | None = None  # display name ("Bo")
    handle: str | None = None  # @username where the platform has one ("bo")

    def label(self) -> str:
        """How the model sees the sender in a group: "Bo (@bo)", "Bo", "@bo" or the id."""
        if self.name and self.handle:
            return f"{self.name} (@{self.handle})"
        if self.name:
            return self.name
        return f"@{self.handle}" if self.handle else self.user_id


class Function(BaseModel):
    name: str
    arguments: str = "{}"  # JSON text, exactly as the model wrote it


class ToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: Function

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises ValueError when they are not a JSON object."""
        raw = self.function.arguments.strip() or "{}"
        value = json.loads(raw)
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object")
        return value


class Message(BaseModel):
    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    name: str | None = None
    tool_call_id: str | None = None
    base64_image: str | None = Field(default=None, description="an image attached to the turn")
    # user-role messages and a person's answers (ask_human's tool results): who wrote it (None in a
    # private chat, where it is the one person)
    sender: Sender | None = None
    # user-role messages only: None means a person's words (Origin.PERSON)
    origin: Origin | None = None

    @property
    def is_persons_words(self) -> bool:
        """A user-role message a person wrote (not a note the bot wrote to its own planner)."""
        return self.role is Role.USER and self.origin in (None, Origin.PERSON)

    @classmethod
    def system(cls, content: str) -> Message:
        return cls(role=Role.SYSTEM, content=content)

    @classmethod
    def user(
        cls, content: str, base64_image: str | None = None, *, sender: Sender | None = None,
        origin: Origin | None = None,
    ) -> Message:
        return cls(role=Role.USER, content=content, base64_image=base64_image, sender=sender, origin=origin)

    @classmethod
    def assistant(cls, content: str | None, tool_calls: list[ToolCall] | None = None) -> Message:
        return cls(role=Role.ASSISTANT, content=content, tool_calls=tool_calls or None)

    @classmethod
    def tool(cls, content: str, *, tool_call_id: str, name: str) -> Message:
        return cls(role=Role.TOOL, content=content, tool_call_id=tool_call_id, name=name)

    def to_openai(self) -> dict[str, Any]:
        """The wire form for chat.completions (images are added by the LLM formatter)."""
        out: dict[str, Any] = {"role": self.role.value}
        if self.role is Role.ASSISTANT:
            out["content"] = self.content
            if self.tool_calls:
                out["tool_calls"] = [tc.model_dump() for tc in self.tool_calls]
        elif self.role in (Role.USER, Role.TOOL) and self.sender is not None:
            # groups and team threads: the model must know who said it, and who answered (private
            # chats carry no sender)
            out["content"] = f"{self.sender.label()}: {self.content or ''}"
        else:
            out["content"] = self.content or ""
        if self.role is Role.TOOL:
            out["tool_call_id"] = self.tool_call_id
            if self.name:
                out["name"] = self.name
        return out

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=True)

    @classmethod
    def from_json(cls, raw: str) -> Message:
        return cls.model_validate_json(raw)
