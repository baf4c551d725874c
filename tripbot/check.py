"""`tripbot check`: validate the settings (done before this runs), then reach each configured
service once and say, one line each, what answered. Exit status 0 when everything did.

Nothing is sent that changes anything: the database is opened (and migrated, as a start would),
the HTTP address is bound and released, the model endpoint lists its models, Telegram answers
getMe, Slack auth.test (and apps.connections.open for Socket Mode), and each live travel
provider's base URL is asked once (any HTTP answer means it is reachable; keys are checked
by the first real query).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

import httpx

from adapters.startup import STARTUP_TIMEOUT_S, one_line
from bot.settings import Settings

Check = Callable[[Settings], Awaitable[str]]


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

    hint = "check TELEGRAM_BOT_TOKEN, TELEGRAM_API_BASE_URL and the network"
    request = HTTPXRequest(connect_timeout=STARTUP_TIMEOUT_S, read_timeout=STARTUP_TIMEOUT_S)
    bot = Bot(s.telegram_bot_token or "", base_url=s.telegram_api_base_url, request=request)
    try:
        me = await bot.get_me()
    except InvalidToken:
        raise CheckFailed("Telegram refused TELEGRAM_BOT_TOKEN", hint) from None
    except TelegramError as exc:
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


def checks_for(s: Settings) -> list[tuple[str, Check]]:
    out: list[tuple[str, Check]] = [("database", _database), ("http", _http), ("model", _model)]
    if s.telegram_bot_token:
        out.append(("telegram", _telegram))
    if s.slack_bot_token:
        out.append(("slack", _slack))
    if s.travel_data == "live":
        from tools.travel.live.http import LiveEndpoints

        defaults = LiveEndpoints.from_config(s)
        if s.amap_key:
            out.append(("amap", _provider("amap", defaults.amap, "AMAP_BASE_URL")))
        if s.searxng_url:
            out.append(("searxng", _provider("searxng", s.searxng_url, "SEARXNG_URL")))
        elif s.tavily_api_key:
            out.append(("tavily", _provider("tavily", defaults.tavily, "TAVILY_BASE_URL")))
        if s.duffel_token:
            out.append(("duffel", _provider("duffel", defaults.duffel, "DUFFEL_BASE_URL")))
        out.append(("12306", _provider("12306", defaults.rail12306, "RAIL12306_BASE_URL")))
    return out


async def run_checks(s: Settings, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    print("configuration: ok", file=out, flush=True)
    failed = 0
    for name, check in checks_for(s):
        try:
            detail = await asyncio.wait_for(check(s), STARTUP_TIMEOUT_S + 1)
        except CheckFailed as exc:
            failed += 1
            print(f"{name}: FAILED: {exc}", file=out, flush=True)
        except TimeoutError:
            failed += 1
            print(f"{name}: FAILED: no answer within {STARTUP_TIMEOUT_S + 1:g} s", file=out, flush=True)
        else:
            print(f"{name}: ok: {detail}", file=out, flush=True)
    print("all checks passed" if not failed else f"{failed} check(s) failed", file=out, flush=True)
    return 0 if not failed else 1
