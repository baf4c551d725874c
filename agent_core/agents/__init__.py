"""BaseAgent -> ReActAgent -> ToolCallAgent. Agents differ only by prompt and tool set."""

from agent_core.agents.base import BaseAgent
from agent_core.agents.react import ReActAgent
from agent_core.agents.toolcall import ToolCallAgent

__all__ = ["BaseAgent", "ReActAgent", "ToolCallAgent"]
