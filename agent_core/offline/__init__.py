"""The offline planner: a rule-based ChatModel used when no LLM is configured."""

from agent_core.offline.planner import OfflinePlanner

__all__ = ["OfflinePlanner"]
