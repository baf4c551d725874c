"""Entry point: build everything from Settings and start it.

    python bot.py           serve every configured surface, and the web chat always
    python bot.py chat      talk to the same runtime in this terminal
    python bot.py --help    this help

With nothing configured it is a complete offline demo: web chat + offline planner + sandbox data.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys

import httpx
from pydantic import ValidationError

from adapters.console import ConsoleSurface, run_console
from adapters.runtime import Runtime, build_runtime, freeze_startup_heap
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from agent_core.model import ChatModel
from agent_core.offline.planner import OfflinePlanner
from agent_core.prompts.travel import build_system_prompt
from agent_core.travel_agent import travel_toolset
from bot.llm_metrics import LLMMetrics
from bot.metrics import Metrics
from bot.review import PlanReviewer
from bot.settings import Settings
from bot.store.base import StoreUnavailable
from bot.validation import build_plan_validator
from tools.collection import ToolCollection
from tools.travel import Gazetteer, SandboxProvider, build_travel_tools, make_provider

log = logging.getLogger("bot")
EXIT_STORE_UNAVAILABLE = 3  # the database could not be reached (BOT_DB_URL)


def make_model(settings: Settings, gazetteer: Gazetteer, metrics: Metrics) -> ChatModel:
    if settings.offline_model:
        return OfflinePlanner(gazetteer)
    config = LLMConfig(
        model=settings.llm_model, api_key=settings.openai_api_key or "", base_url=settings.openai_base_url,
        context_tokens=settings.llm_context_tokens, timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
    )
    return LLM(config, observer=LLMMetrics(metrics))


def make_tools(
    settings: Settings, gazetteer: Gazetteer, sandbox: SandboxProvider, http: httpx.AsyncClient | None
) -> ToolCollection:
    providers = make_provider(settings, gazetteer, sandbox, http=http)
    return travel_toolset(build_travel_tools(gazetteer, providers))


def make_reviewer(
    settings: Settings, gazetteer: Gazetteer, model: ChatModel, tools: ToolCollection, sandbox: SandboxProvider
) -> PlanReviewer | None:
    if not settings.validate_plans:
        return None
    return build_plan_validator(settings, gazetteer=gazetteer, model=model, tools=tools, sandbox=sandbox)


def assemble(
    settings: Settings, resources: contextlib.AsyncExitStack, *, serve_http: bool, extra: list[ConsoleSurface] | None = None
) -> Runtime:
    """Build the runtime; what must be closed at shutdown is pushed onto `resources`."""
    gazetteer = Gazetteer.load()
    sandbox = SandboxProvider(gazetteer)
    metrics = Metrics()
    model = make_model(settings, gazetteer, metrics)
    if isinstance(model, LLM):
        resources.push_async_callback(model.aclose)
    http = None
    if settings.travel_data == "live":  # one client for every live provider
        http = httpx.AsyncClient(timeout=httpx.Timeout(20.0, connect=5.0))
        resources.push_async_callback(http.aclose)
    tools = make_tools(settings, gazetteer, sandbox, http)
    runtime = build_runtime(
        settings, model=model, tools=tools, prompt=build_system_prompt,
        reviewer=make_reviewer(settings, gazetteer, model, tools, sandbox), serve_http=serve_http,
        extra_surfaces=list(extra or []), metrics=metrics,
    )
    return runtime


def describe(settings: Settings) -> list[str]:
    lines = []
    lines.append("model: offline planner (set OPENAI_API_KEY to use an LLM)" if settings.offline_model
                 else f"model: {settings.llm_model} at {settings.openai_base_url or 'the OpenAI API'}")
    lines.append(f"travel data: {settings.travel_data}")
    if settings.db_url:
        from bot.store.pg_connect import redact

        lines.append(f"store: PostgreSQL at {redact(settings.db_url)}")
    else:
        lines.append(f"store: SQLite file {settings.db_path}")
    if settings.telegram_bot_token:
        lines.append("telegram: " + ("webhook" if settings.telegram_webhook_url else "long polling"))
    if settings.slack_bot_token:
        lines.append("slack: " + ("socket mode" if settings.slack_app_token else "events API at /slack/events"))
    return lines


async def serve(settings: Settings) -> None:
    async with contextlib.AsyncExitStack() as resources:
        await _serve(settings, resources)


async def _serve(settings: Settings, resources: contextlib.AsyncExitStack) -> None:
    runtime = assemble(settings, resources, serve_http=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # event loops without signal support (Windows)
            loop.add_signal_handler(sig, stop.set)
    await runtime.start()
    freeze_startup_heap()
    assert runtime.server is not None
    print(f"Travel bot ready: open {runtime.server.base_url} in a browser", flush=True)
    for line in describe(settings):
        print("  " + line, flush=True)
    try:
        await stop.wait()
    finally:
        print("shutting down ...", flush=True)
        await runtime.stop()


async def chat(settings: Settings) -> None:
    async with contextlib.AsyncExitStack() as resources:
        await _chat(settings, resources)


async def _chat(settings: Settings, resources: contextlib.AsyncExitStack) -> None:
    surface = ConsoleSurface()
    runtime = assemble(settings, resources, serve_http=False, extra=[surface])
    await runtime.start()
    freeze_startup_heap()
    for line in describe(settings):
        print(line, flush=True)
    try:
        await run_console(runtime.manager, surface)
    finally:
        await runtime.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bot.py",
        description="A travel-planning agent bot for Telegram, Slack and the web. "
        "Configuration comes from the environment and .env (see README).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("serve", help="serve every configured surface and the web chat (the default)")
    sub.add_parser("chat", help="chat with the bot in this terminal")
    args = parser.parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:  # a bad setting is the person's to fix: say which and how
        for err in exc.errors(include_url=False):
            name = str(err["loc"][0]).upper() if err["loc"] else "?"
            print(f"configuration error: {name}={err.get('input')!r}: {err['msg']}", file=sys.stderr)
        print("Fix it in the environment or in .env (see README, Configuration).", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level.upper(), stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        if args.command == "chat":
            logging.getLogger().setLevel(logging.WARNING)  # keep the terminal for the conversation
            asyncio.run(chat(settings))
        else:
            asyncio.run(serve(settings))
    except StoreUnavailable as exc:  # e.g. PostgreSQL down at start: say what to fix, no traceback
        print(f"error: {exc}", file=sys.stderr)
        print(f"The bot did not start (exit code {EXIT_STORE_UNAVAILABLE}).", file=sys.stderr)
        return EXIT_STORE_UNAVAILABLE
    return 0


if __name__ == "__main__":
    sys.exit(main())
