"""HTTP plumbing shared by the live providers: base URLs, one request helper, strict parsing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from tools.errors import ProviderError

M = TypeVar("M", bound=BaseModel)

AMAP_BASE_URL = "https://restapi.amap.com"
TAVILY_BASE_URL = "https://api.tavily.com"
RAIL12306_BASE_URL = "https://kyfw.12306.cn"
DUFFEL_BASE_URL = "https://api.duffel.com"


@dataclass(frozen=True, slots=True)
class LiveEndpoints:
    """Base URLs of the live services; the defaults are the real ones (SearXNG has none)."""

    amap: str = AMAP_BASE_URL
    tavily: str = TAVILY_BASE_URL
    rail12306: str = RAIL12306_BASE_URL
    duffel: str = DUFFEL_BASE_URL

    @classmethod
    def from_config(cls, config: object) -> LiveEndpoints:
        """Optional overrides from settings fields amap_base_url, tavily_base_url,
        rail12306_base_url and duffel_base_url, where the settings have them."""

        def pick(name: str, default: str) -> str:
            value = getattr(config, name, None)
            return str(value) if value else default

        return cls(
            amap=pick("amap_base_url", AMAP_BASE_URL),
            tavily=pick("tavily_base_url", TAVILY_BASE_URL),
            rail12306=pick("rail12306_base_url", RAIL12306_BASE_URL),
            duffel=pick("duffel_base_url", DUFFEL_BASE_URL),
        )


def join(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: httpx.Headers
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


async def send(
    client: httpx.AsyncClient, method: str, url: str, *, provider: str, label: str, **kwargs: Any
) -> Reply:
    """One request; network faults become a retryable ProviderError naming the service."""
    try:
        resp = await client.request(method, url, **kwargs)
    except httpx.TimeoutException:
        raise ProviderError(f"{label} did not answer in time; try again in a moment",
                            provider=provider, retryable=True) from None
    except httpx.HTTPError as exc:
        raise ProviderError(f"{label} could not be reached ({type(exc).__name__}); try again later or use another tool",
                            provider=provider, retryable=True) from None
    return Reply(resp.status_code, resp.headers, resp.text)


def server_error(reply: Reply, *, provider: str, label: str) -> ProviderError:
    return ProviderError(f"{label} had an internal error (HTTP {reply.status}); try again in a moment",
                         provider=provider, status_code=reply.status, retryable=True)


def refuse_redirect(reply: Reply, *, provider: str, label: str) -> None:
    """The APIs answer where they are asked: a redirect is a login page, a firewall or a loop,
    never followed (12306, which does redirect its own queries, handles that itself)."""
    if 300 <= reply.status < 400:
        where = reply.headers.get("location", "")
        raise ProviderError(f"{label} redirected the request (HTTP {reply.status}{f' to {where}' if where else ''}) "
                            "instead of answering; try again later or use another tool",
                            provider=provider, status_code=reply.status, retryable=True)


def body(reply: Reply, *, provider: str, label: str) -> Any:
    """The JSON body, or a ProviderError when the answer is not JSON (an HTML page, a cut-off body)."""
    try:
        return reply.json()
    except ValueError:
        page = " (an HTML page)" if reply.text.lstrip()[:1] == "<" else ""
        raise ProviderError(f"{label} sent an answer that is not JSON{page} (HTTP {reply.status}); try again later",
                            provider=provider, status_code=reply.status, retryable=True) from None


def parse(model: type[M], data: Any, *, provider: str, label: str) -> M:
    """Validate a service's JSON against its pydantic model; a changed shape is a clear error."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors(include_url=False)[0]["loc"]) or "body"
        raise ProviderError(f"{label} answered in an unexpected shape (at {where}); the live source may have "
                            "changed, try again later", provider=provider, retryable=False) from None
