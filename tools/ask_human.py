"""ask_human(inquire): pause the run until the person answers."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from tools.base import BaseTool, ToolContext, ToolResult
from tools.signals import HumanInputRequired


class AskHumanParams(BaseModel):
    inquire: str = Field(description="The question to ask the person, in their language.")
    options: list[str] | None = Field(
        default=None,
        description="Optional short choices the person can pick from (e.g. several matching stations).",
        max_length=10,
    )

    @field_validator("inquire")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the question must not be empty")
        return v


class AskHuman(BaseTool[AskHumanParams]):
    name = "ask_human"
    description = (
        "Ask the person a question when you need a fact only they know (date, budget, which of "
        "several places). The run pauses until they answer; the answer comes back as this tool's result."
    )
    params_model = AskHumanParams

    async def execute(self, params: AskHumanParams, ctx: ToolContext) -> ToolResult:
        options = tuple(o.strip() for o in (params.options or []) if o.strip())
        raise HumanInputRequired(params.inquire.strip(), ctx.tool_call_id, options)
