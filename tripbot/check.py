"""`tripbot check`: validate the settings (done before this runs), then reach each configured
service once and say, one line each, what answered. Exit status 0 when everything did.

Nothing is sent that changes anything: the database is opened (and migrated, as a start would),
the HTTP address is bound and released, the model endpoint lists its models, Telegram answers
getMe, Slack auth.test (and apps.connections.open for Socket Mode), and each live travel
provider's base URL is asked once (any HTTP answer means it is reachable; keys are checked
by the first real query).

`tripbot check --live` instead makes one real query to each configured travel provider (a place,
a web search, a flight search three weeks ahead, tomorrow's trains Beijing -> Shanghai) and
prints what came back, so an operator sees the real thing and its caveats.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from typing import Any, TextIO
from zoneinfo import ZoneInfo

import httpx

from adapters.startup import STARTUP_TIMEOUT_S, one_line
from bot.settings import Settings

Check = Callable[[Settings], Awaitable[str]]
LIVE_TIMEOUT_S = 45.0  # a real flight search waits for the airlines (Duffel's supplier timeout is 10 s)


class CheckFailed(Exception):
    """A check's one-line reason; the hint names the setting to look at."""

    def __init__(self, detail: str, hint: str) -> None:
        super().__init__(f"{detail} ({hint})")


async def _database(s: Settings) -> str:
    from bot.store import SqliteStore

    store = SqliteStore(s.db_path)
    try:
        await store.open()
        if not await store.ping():
            raise CheckFailed("the database does not answer", "check BOT_DB_PATH")
    except CheckFailed:
        raise
    except Exception as exc:
        raise CheckFailed(f"cannot open {s.db_path}: {one_line(exc)}", "check BOT_DB_PATH") from None
    finally:
        await store.close()
    return str(s.db_path)


async def _http(s: Settings) -> str:
    from bot.http.server import HttpServer, HttpServerError
    from bot.observe.metrics import Metrics

    server = HttpServer(s, Metrics())
    try:
        server.bind()
    except HttpServerError as exc:
        raise CheckFailed(str(exc), "set BOT_PORT to a free port, or stop the process that holds it") from None
    port = server.port
    await server.stop()
    return f"{s.host}:{port} is free" + ("" if s.host_is_loopback else " (BOT_WEB_TOKEN is set)")


async def _model(s: Settings) -> str:
    if s.offline_model:
        return "offline planner (no OPENAI_API_KEY)"
    import openai

    client = openai.AsyncOpenAI(api_key=s.openai_api_key, base_url=s.openai_base_url,
                                timeout=STARTUP_TIMEOUT_S, max_retries=0)
    where = s.openai_base_url or "the OpenAI API"
    hint = "check OPENAI_API_KEY, OPENAI_BASE_URL and the network"
    try:
        models = [m.id async for m in client.models.list()]
    except openai.NotFoundError:  # some compatible servers do not list models
        return f"{where} answers (it does not list models)"
    except openai.AuthenticationError:
        raise CheckFailed(f"{where} refused OPENAI_API_KEY", hint) from None
    except openai.APIError as exc:
        raise CheckFailed(f"{where}: {one_line(exc)}", hint) from None
    finally:
        await client.close()
    known = "" if not models or s.llm_model in models else f"; BOT_LLM_MODEL={s.llm_model} is not among its {len(models)} models"
    return f"{where} answers{known}"


async def _telegram(s: Settings) -> str:
    from telegram import Bot
    from telegram.error import InvalidToken, TelegramError
    from telegram.request import HTTPXRequest

    from adapters.telegram.errors import PTB_REQUEST_LOGGER, UNPARSED_ANSWERS, not_the_bot_api

    logging.getLogger(PTB_REQUEST_LOGGER).addFilter(UNPARSED_ANSWERS)

    hint = "check TELEGRAM_BOT_TOKEN, TELEGRAM_API_BASE_URL and the network"
    request = HTTPXRequest(connect_timeout=STARTUP_TIMEOUT_S, read_timeout=STARTUP_TIMEOUT_S)
    bot = Bot(s.telegram_bot_token or "", base_url=s.telegram_api_base_url, request=request)
    try:
        me = await bot.get_me()
    except TelegramError as exc:
        if (other := not_the_bot_api(exc, s.telegram_api_base_url)) is not None:
            raise CheckFailed(str(other), "check TELEGRAM_API_BASE_URL") from None
        if isinstance(exc, InvalidToken):
            raise CheckFailed("Telegram refused TELEGRAM_BOT_TOKEN", hint) from None
        raise CheckFailed(f"Telegram Bot API: {one_line(exc)}", hint) from None
    finally:
        await request.shutdown()
    mode = "webhook" if s.telegram_webhook_url else "long polling"
    return f"@{me.username} ({mode})"


async def _slack(s: Settings) -> str:
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    hint = "check SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_API_BASE_URL and the network"
    client = AsyncWebClient(token=s.slack_bot_token, base_url=s.slack_api_base_url, timeout=int(STARTUP_TIMEOUT_S))
    try:
        auth = await client.auth_test()
        mode = "events API at /slack/events"
        if s.slack_app_token:
            await client.apps_connections_open(app_token=s.slack_app_token)
            mode = "Socket Mode"
    except SlackApiError as exc:
        raise CheckFailed(f"Slack refused: {exc.response.get('error', exc)}", hint) from None
    except Exception as exc:
        raise CheckFailed(f"Slack Web API: {one_line(exc)}", hint) from None
    return f"{auth.get('user')} in {auth.get('team')} ({mode})"


def _provider(name: str, url: str, setting: str) -> Check:
    async def check(s: Settings) -> str:
        try:
            async with httpx.AsyncClient(timeout=STARTUP_TIMEOUT_S) as client:
                response = await client.get(url)
        except httpx.HTTPError as exc:
            raise CheckFailed(f"{url}: {type(exc).__name__}: {one_line(exc)}", f"check {setting} and the network") from None
        return f"{url} answers (HTTP {response.status_code})"

    check.__name__ = name
    return check


def _live(name: str, setting: str) -> Check:
    """One real query through the provider the bot would use, summarised in a line."""

    async def check(s: Settings) -> str:
        from tools.errors import ToolError
        from tools.travel import Gazetteer, SandboxProvider, make_provider

        gaz = Gazetteer.load()
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=STARTUP_TIMEOUT_S),
                                     headers={"User-Agent": "travel-agent-bot/0.1 (tripbot check)"}) as client:
            providers = make_provider(s, gaz, SandboxProvider(gaz), http=client)
            try:
                return await _SAMPLES[name](providers, gaz)
            except ToolError as exc:
                raise CheckFailed(exc.message, f"check {setting} and the network") from None

    check.__name__ = f"live_{name}"
    return check


async def _amap(p: Any, gaz: Any) -> str:
    found = await p.places.places("天安门", gaz.resolve_city("北京"), 1)
    first = found.items[0] if found.items else None
    got = f"{first.name}, {first.address} ({first.lat:.4f}, {first.lon:.4f})" if first else "nothing"
    return _with_caveats(f"poi_search 天安门 in 北京: {got}", found.caveats)


async def _web(p: Any, gaz: Any) -> str:
    found = await p.web.search("12306 火车票 预售期", 3)
    first = found.items[0] if found.items else None
    got = f"{len(found.items)} results, first: {first.title} <{first.url}>" if first else "no results"
    return _with_caveats(f"web_search via {found.source}: {got}", found.caveats)


async def _duffel(p: Any, gaz: Any) -> str:
    from tools.travel.provider import FlightQuery

    day = _today() + timedelta(days=21)
    found = await p.flights.flights(FlightQuery(gaz.resolve_city("北京"), gaz.resolve_city("上海"), day, ("PEK",), ("SHA",)))
    if not found.items:
        return _with_caveats(f"flight_search PEK->SHA {day}: no offers", found.caveats)
    cheap = min(found.items, key=lambda f: f.price)
    quoted = f" ({cheap.quoted})" if cheap.quoted else ""
    return _with_caveats(f"flight_search PEK->SHA {day}: {len(found.items)} flights, cheapest {cheap.number} "
                         f"{cheap.depart[11:]} {cheap.price:.2f} {cheap.currency}{quoted}", found.caveats)


async def _rail(p: Any, gaz: Any) -> str:
    from tools.travel.provider import TrainQuery

    bj, sh = gaz.resolve_city("北京"), gaz.resolve_city("上海")
    day = _today() + timedelta(days=1)
    found = await p.trains.trains(TrainQuery(bj, sh, day, bj.stations, sh.stations))
    path = getattr(p.trains, "query_path", "")
    got = (f"{len(found.items)} trains, first {found.items[0].number} {found.items[0].depart[11:]}->"
           f"{found.items[0].arrive[11:]}" if found.items else "no trains")
    return _with_caveats(f"train_search 北京->上海 {day}: {got}" + (f"; query path {path}" if path else ""),
                         found.caveats)


def _today() -> date:
    return datetime.now(ZoneInfo("Asia/Shanghai")).date()


def _with_caveats(line: str, caveats: list[str]) -> str:
    return line + "".join(f"\n    caveat: {c}" for c in caveats)


_SAMPLES: dict[str, Callable[[Any, Any], Awaitable[str]]] = {
    "amap": _amap, "searxng": _web, "tavily": _web, "duffel": _duffel, "12306": _rail}


def checks_for(s: Settings, *, live: bool = False) -> list[tuple[str, Check]]:
    out: list[tuple[str, Check]] = [("database", _database), ("http", _http), ("model", _model)]
    if s.telegram_bot_token:
        out.append(("telegram", _telegram))
    if s.slack_bot_token:
        out.append(("slack", _slack))
    if s.travel_data == "live":
        from tools.travel.live.http import LiveEndpoints

        defaults = LiveEndpoints.from_config(s)
        wanted = [("amap", defaults.amap, "AMAP_KEY / AMAP_BASE_URL") if s.amap_key else None,
                  ("searxng", s.searxng_url or "", "SEARXNG_URL") if s.searxng_url else None,
                  ("tavily", defaults.tavily, "TAVILY_API_KEY / TAVILY_BASE_URL")
                  if s.tavily_api_key and not s.searxng_url else None,
                  ("duffel", defaults.duffel, "DUFFEL_TOKEN / DUFFEL_BASE_URL") if s.duffel_token else None,
                  ("12306", defaults.rail12306, "RAIL12306_BASE_URL")]
        for name, url, setting in filter(None, wanted):
            out.append((name, _live(name, setting) if live else _provider(name, url, setting)))
    return out


async def run_checks(s: Settings, out: TextIO | None = None, *, live: bool = False) -> int:
    out = out or sys.stdout
    print("configuration: ok", file=out, flush=True)
    if live and s.travel_data != "live":
        print("travel: BOT_TRAVEL_DATA is not 'live', so --live has no travel provider to call", file=out, flush=True)
    failed = 0
    for name, check in checks_for(s, live=live):
        limit = LIVE_TIMEOUT_S if check.__name__.startswith("live_") else STARTUP_TIMEOUT_S + 1
        try:
            detail = await asyncio.wait_for(check(s), limit)
        except CheckFailed as exc:
            failed += 1
            print(f"{name}: FAILED: {exc}", file=out, flush=True)
        except TimeoutError:
            failed += 1
            print(f"{name}: FAILED: no answer within {limit:g} s", file=out, flush=True)
        else:
            print(f"{name}: ok: {detail}", file=out, flush=True)
    print("all checks passed" if not failed else f"{failed} check(s) failed", file=out, flush=True)
    return 0 if not failed else 1
