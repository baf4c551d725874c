"""ask_human(inquire, options?, to?): pause the run until the person answers.

Several calls in one turn ask several people at once (one each, `to` naming a traveller); the
run goes on when every one of them is answered or has expired.
"""

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
    to: str | None = Field(
        default=None,
        description=(
            "Optional: the traveller the question is for, as the request names them (a mention such as "
            "<@U123> or @bo, or a plain name). Only that person's reply answers it. Ask several travellers "
            "at once with one ask_human call each."
        ),
        max_length=100,
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
        "several places). The run pauses until they answer; the answer comes back as this tool's result. "
        "With `to`, the question goes to one traveller of a team trip."
    )
    params_model = AskHumanParams

    async def execute(self, params: AskHumanParams, ctx: ToolContext) -> ToolResult:
        options = tuple(o.strip() for o in (params.options or []) if o.strip())
        to = (params.to or "").strip()
        if to and ctx.travellers and not any(_key(to) == _key(t) for t in ctx.travellers):
            # an unknown traveller: the model picks one of the party (or asks without `to`)
            return ToolResult.fail(f"{to!r} is not a traveller of this trip; `to` must be one of: {', '.join(ctx.travellers)}")
        raise HumanInputRequired(params.inquire.strip(), ctx.tool_call_id, options, to)


def _key(name: str) -> str:
    """"<@U1|ana>", "<@U1>" -> "u1"; "@Bo" -> "bo"."""
    return name.strip().removeprefix("<@").split("|", 1)[0].rstrip(">").lstrip("@").lower()
