"""terminate(status): end the run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tools.base import BaseTool, ToolContext, ToolResult


class TerminateParams(BaseModel):
    status: Literal["success", "failure"] = Field(description="Whether the task was completed.")


class Terminate(BaseTool[TerminateParams]):
    name = "terminate"
    description = "End the task when it is complete or cannot be completed. Put the final answer in your message text."
    params_model = TerminateParams
    read_only = True
    ends_run = True

    async def execute(self, params: TerminateParams, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=f"The run ended with status {params.status}.", ends_run=True, summary=params.status)
