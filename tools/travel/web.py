"""web_search: general web search for travel facts (not for flights, trains or hotels)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from tools.base import BaseTool, ToolContext, ToolResult
from tools.travel.common import render
from tools.travel.provider import WebProvider


class WebSearchParams(BaseModel):
    query: str = Field(min_length=1, max_length=300, description="What to look up")
    max_results: int = Field(default=5, ge=1, le=10)


class WebSearch(BaseTool[WebSearchParams]):
    name = "web_search"
    description = (
        "Search the web for general travel information (rules, tips, weather patterns, opening news). "
        "Do not use it for flights, trains or hotels: use their own tools."
    )
    params_model = WebSearchParams
    read_only = True

    def __init__(self, provider: WebProvider) -> None:
        self._provider = provider

    async def execute(self, params: WebSearchParams, ctx: ToolContext) -> ToolResult:
        found = await self._provider.search(params.query.strip(), params.max_results)
        return render(found, params, found.items, limit=params.max_results,
                      summary=f"{len(found.items)} web results for {params.query.strip()[:30]}")
