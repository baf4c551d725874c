"""ToolCollection: look tools up by name and run a tool call, turning faults into observations."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from tools.base import BaseTool, ToolContext, ToolResult
from tools.errors import ToolError

log = logging.getLogger(__name__)


class ToolCollection:
    def __init__(self, tools: Iterable[BaseTool[Any]]) -> None:
        self._tools: dict[str, BaseTool[Any]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._params = [t.to_param() for t in self._tools.values()]

    def __iter__(self) -> Iterator[BaseTool[Any]]:
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> BaseTool[Any] | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def read_only(self, names: Iterable[str]) -> bool:
        """Do all these tools only read? (An unknown name only gets an error back.)"""
        return all(tool is None or tool.read_only for tool in map(self._tools.get, names))

    def to_params(self) -> list[dict[str, Any]]:
        return self._params

    def without(self, *names: str) -> ToolCollection:
        return ToolCollection(t for t in self._tools.values() if t.name not in names)

    async def execute(self, name: str, raw_arguments: str | dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run one call. Faults become a ToolResult with `error`; HumanInputRequired passes through
        (it derives from BaseException, so the broad handler below does not see it)."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.fail(f"there is no tool named {name!r}; available tools: {', '.join(self._tools)}")
        try:
            result = await tool(raw_arguments, ctx)
        except ToolError as exc:
            return ToolResult.fail(exc.message)
        except Exception as exc:
            log.exception("tool %s crashed", name)
            return ToolResult.fail(f"{name} failed unexpectedly ({type(exc).__name__}); try other arguments or another tool")
        if tool.ends_run:
            result.ends_run = True
        if not result.summary:
            result.summary = (result.error or result.output).splitlines()[0][:120] if (result.error or result.output) else ""
        return result
