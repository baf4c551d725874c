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

    @classmethod
    def system(cls, content: str) -> Message:
        return cls(role=Role.SYSTEM, content=content)

    @classmethod
    def user(cls, content: str, base64_image: str | None = None) -> Message:
        return cls(role=Role.USER, content=content, base64_image=base64_image)

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
