"""BaseTool: parameters as a pydantic model (-> JSON schema), results as ToolResult."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from tools.errors import ToolError

if TYPE_CHECKING:
    from tools.plan import TripPlan


@dataclass(frozen=True, slots=True)
class SharedLocation:
    latitude: float
    longitude: float
    label: str | None = None


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may know about the call and the person; built when a run (re)starts."""

    tool_call_id: str
    now: datetime  # timezone-aware "now" of the person
    lang: str = "zh"  # "zh" or "en"
    location: SharedLocation | None = None
    home_city: str = "北京"


@dataclass(slots=True)
class ToolResult:
    output: str = ""  # what the model sees
    error: str | None = None
    summary: str = ""  # one line for progress displays
    ends_run: bool = False
    final_text: str | None = None
    plan: TripPlan | None = None
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    def observation(self) -> str:
        if self.error is not None:
            return f"Error: {self.error}"
        return self.output

    @classmethod
    def fail(cls, message: str) -> ToolResult:
        return cls(error=message, summary=message[:120])


P = TypeVar("P", bound=BaseModel)


class BaseTool(ABC, Generic[P]):
    name: ClassVar[str]
    description: ClassVar[str]
    params_model: ClassVar[type[BaseModel]]
    ends_run: ClassVar[bool] = False
    # Running it again changes nothing outside the process (a search, a lookup): a crash may
    # repeat the call, so the agent need not wait for the reply that asked for it to be on disk.
    read_only: ClassVar[bool] = False

    def to_param(self) -> dict[str, Any]:
        """The OpenAI function-tool description."""
        schema = self.params_model.model_json_schema()
        schema.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": schema},
        }

    def parse(self, raw: str | dict[str, Any]) -> P:
        """Validate raw arguments; raises ToolError with a message the model can act on."""
        if isinstance(raw, str):
            text = raw.strip() or "{}"
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ToolError(
                    f"arguments for {self.name} are not valid JSON ({exc.msg} at position {exc.pos}); "
                    f"send a JSON object with the fields {self._field_list()}"
                ) from None
        else:
            data = raw
        if not isinstance(data, dict):
            raise ToolError(f"arguments for {self.name} must be a JSON object")
        try:
            return self.params_model.model_validate(data)  # type: ignore[return-value]
        except ValidationError as exc:
            raise ToolError(f"invalid arguments for {self.name}: {format_validation_error(exc)}") from None

    def _field_list(self) -> str:
        return ", ".join(self.params_model.model_fields)

    @abstractmethod
    async def execute(self, params: P, ctx: ToolContext) -> ToolResult: ...

    async def __call__(self, raw: str | dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.execute(self.parse(raw), ctx)


def format_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        msg = err["msg"]
        if err["type"] == "missing":
            msg = "required field is missing"
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)
