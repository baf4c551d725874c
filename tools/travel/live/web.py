"""Live web search: a SearXNG instance (GET /search?format=json) or Tavily (POST /search)."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel, Field

from tools.errors import ProviderError
from tools.travel.live.http import (
    TAVILY_BASE_URL,
    Reply,
    body,
    join,
    parse,
    refuse_redirect,
    send,
    server_error,
)
from tools.travel.models import Found, WebHit


class SearxResult(BaseModel):
    url: str = ""
    title: str = ""
    content: str | None = ""


class SearxAnswer(BaseModel):
    query: str = ""
    results: list[SearxResult] = Field(default_factory=list)
    unresponsive_engines: list[Any] = Field(default_factory=list)


class TavilyResult(BaseModel):
    title: str = ""
    url: str = ""
    content: str = ""
    score: float | None = None


class TavilyAnswer(BaseModel):
    query: str = ""
    results: list[TavilyResult] = Field(default_factory=list)


def _engines(unresponsive: list[Any]) -> str:
    """SearXNG lists [engine, reason] pairs: 'brave (Suspended: too many requests), duckduckgo (timeout)'."""
    out = []
    for item in unresponsive:
        if isinstance(item, list | tuple) and item:
            name, reason = str(item[0]), " ".join(str(x) for x in item[1:])
            out.append(f"{name} ({reason})" if reason else name)
        elif isinstance(item, str):
            out.append(item)
    return ", ".join(out)


def _snippet(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= 400 else text[:397] + "..."


class SearxngWeb:
    PROVIDER = "searxng"
    LABEL = "the SearXNG search instance"

    def __init__(self, client: httpx.AsyncClient, base_url: str) -> None:
        self._http = client
        self._base = base_url

    async def search(self, query: str, limit: int) -> Found[WebHit]:
        reply = await send(self._http, "GET", join(self._base, "/search"), provider=self.PROVIDER, label=self.LABEL,
                           params={"q": query, "format": "json", "safesearch": "1"})
        refuse_redirect(reply, provider=self.PROVIDER, label=self.LABEL)
        if reply.status >= 500:
            raise server_error(reply, provider=self.PROVIDER, label=self.LABEL)
        if reply.status == 403:
            raise ProviderError(f"{self.LABEL} refused JSON output (HTTP 403); the operator must add 'json' to "
                                "search.formats in its settings.yml", provider=self.PROVIDER, status_code=403)
        if reply.status == 429:
            raise ProviderError(f"{self.LABEL} is rate-limiting this bot (HTTP 429); wait a minute and try again",
                                provider=self.PROVIDER, status_code=429, retryable=True)
        if reply.status != 200:
            raise ProviderError(f"{self.LABEL} refused the search (HTTP {reply.status})", provider=self.PROVIDER,
                                status_code=reply.status)
        answer = parse(SearxAnswer, body(reply, provider=self.PROVIDER, label=self.LABEL),
                       provider=self.PROVIDER, label=self.LABEL)
        hits = [WebHit(title=r.title, snippet=_snippet(r.content), url=r.url) for r in answer.results if r.url][:limit]
        failed = _engines(answer.unresponsive_engines)
        if failed and not hits:
            # SearXNG answers 200 with no results when every engine failed: that is not "nothing exists"
            raise ProviderError(f"{self.LABEL} found nothing because its search engines failed ({failed}); this says "
                                "nothing about whether such pages exist. Try again in a few minutes or rephrase",
                                provider=self.PROVIDER, status_code=reply.status, retryable=True)
        caveats = [f"some web search engines failed ({failed}); results may be incomplete"] if failed else []
        return Found(hits, self.PROVIDER, "live web search through SearXNG; check facts on the linked pages",
                     caveats=caveats)


class TavilyWeb:
    PROVIDER = "tavily"
    LABEL = "Tavily web search"

    def __init__(self, client: httpx.AsyncClient, api_key: str, *, base_url: str = TAVILY_BASE_URL) -> None:
        self._http = client
        self._key = api_key
        self._base = base_url

    def _error(self, reply: Reply) -> ProviderError:
        detail = ""
        try:
            raw = reply.json().get("detail")
            detail = str(raw.get("error") if isinstance(raw, dict) else raw or "")
        except (ValueError, AttributeError):
            pass
        said = f" ({detail})" if detail else ""
        if reply.status == 401:
            text, retry = f"the TAVILY_API_KEY was refused{said}; the operator must fix the key", False
        elif reply.status == 429:
            text, retry = f"too many searches right now{said}; wait a minute and try again", True
        elif reply.status in (432, 433):
            text, retry = f"the Tavily plan's search credits are used up{said}; use other tools", False
        else:
            text, retry = f"the search was refused (HTTP {reply.status}){said}; rephrase the query", False
        return ProviderError(f"{self.LABEL}: {text}", provider=self.PROVIDER, status_code=reply.status, retryable=retry)

    async def search(self, query: str, limit: int) -> Found[WebHit]:
        reply = await send(self._http, "POST", join(self._base, "/search"), provider=self.PROVIDER, label=self.LABEL,
                           headers={"Authorization": f"Bearer {self._key}"},
                           json={"query": query, "max_results": limit, "search_depth": "basic", "api_key": self._key})
        refuse_redirect(reply, provider=self.PROVIDER, label=self.LABEL)
        if reply.status >= 500:
            raise server_error(reply, provider=self.PROVIDER, label=self.LABEL)
        if reply.status != 200:
            raise self._error(reply)
        answer = parse(TavilyAnswer, body(reply, provider=self.PROVIDER, label=self.LABEL),
                       provider=self.PROVIDER, label=self.LABEL)
        hits = [WebHit(title=r.title, snippet=_snippet(r.content), url=r.url) for r in answer.results][:limit]
        return Found(hits, self.PROVIDER, "live web search through Tavily; check facts on the linked pages")
