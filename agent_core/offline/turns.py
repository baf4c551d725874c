"""The planner's decision for one turn: text (final when there are no calls) and tool calls,
each with the purpose its call id carries (agent_core.offline.transcript reads it back)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    arguments: dict[str, Any]
    purpose: str


@dataclass(slots=True)
class Turn:
    """The planner's decision: text (final when there are no calls), and tool calls."""

    text: str | None = None
    calls: list[Call] = field(default_factory=list)
