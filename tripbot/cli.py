"""The command line: build everything from Settings and start it.

    tripbot [serve]     serve every configured surface, and the web chat always
    tripbot chat        talk to the same runtime in this terminal
    tripbot check       validate the settings, reach each configured service once, exit
    tripbot --help      this help

(`python bot.py ...` in a checkout is the same command.) With nothing configured it is a
complete offline demo: web chat + offline planner + sandbox data.

Every failure to start prints one line on stderr and exits non-zero within seconds:
"configuration error: SETTING=...: what is wrong" (exit 2) for settings, "startup error: ..."
(exit 1) for what could not start (a taken port, an unreachable platform, a refused token).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
import time

import httpx
from opentelemetry.trace import Tracer
from pydantic import ValidationError

from adapters.console import ConsoleSurface, run_console
from adapters.runtime import Runtime, build_runtime, freeze_startup_heap
from adapters.startup import STARTUP_TIMEOUT_S, StartupError
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from agent_core.model import ChatModel
from agent_core.offline.planner import OfflinePlanner
from agent_core.prompts.request_note import RequestNote
from agent_core.prompts.travel import build_system_prompt
from agent_core.travel_agent import travel_toolset
from bot.observe.json_logs import json_handler
from bot.observe.llm_metrics import LLMMetrics
from bot.observe.log_context import ChatLogContext
from bot.observe.metrics import Metrics
from bot.observe.model_prices import PriceTable
from bot.run.review import PlanReviewer, build_plan_validator
from bot.settings import Settings
from bot.store.base import StoreUnavailable
from tools.collection import ToolCollection
from tools.travel import Gazetteer, SandboxProvider, build_travel_tools, make_provider
from tripbot import LAUNCHED
from tripbot.telemetry import make_tracer

log = logging.getLogger("bot")

# A failed start must end within 5 s of launch: what the imports and the assembly used comes
# off the time an outside service gets to answer (never less than MIN_REACH_S).
STARTUP_BUDGET_S = 4.2
MIN_REACH_S = 2.0


def reach_timeout() -> float:
    return max(MIN_REACH_S, min(STARTUP_TIMEOUT_S, STARTUP_BUDGET_S - (time.monotonic() - LAUNCHED)))


def make_model(settings: Settings, gazetteer: Gazetteer, metrics: Metrics, tracer: Tracer | None = None) -> ChatModel:
    if settings.offline_model:
        return OfflinePlanner(gazetteer)
    config = LLMConfig(
        model=settings.llm_model, api_key=settings.openai_api_key or "", base_url=settings.openai_base_url,
        context_tokens=settings.llm_context_tokens, timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries, stream=settings.llm_stream,
    )
    return LLM(config, observer=LLMMetrics(metrics), tracer=tracer)


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
    settings: Settings, resources: contextlib.AsyncExitStack, *, serve_http: bool, extra: list[ConsoleSurface] | None = None,
    logs: ChatLogContext | None = None,
) -> Runtime:
    """Build the runtime; what must be closed at shutdown is pushed onto `resources`."""
    gazetteer = Gazetteer.load()
    sandbox = SandboxProvider(gazetteer)
    metrics = Metrics()
    tracer = make_tracer(settings, resources)
    model = make_model(settings, gazetteer, metrics, tracer)
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
        extra_surfaces=list(extra or []), metrics=metrics, prices=PriceTable(settings.llm_prices),
        tracer=tracer, logs=logs,
        requests=None if settings.offline_model else RequestNote(gazetteer),  # the offline planner reads it itself
    )
    return runtime


EXIT_STORE_UNAVAILABLE = 3  # the database could not be reached (BOT_DB_URL)


def describe(settings: Settings) -> list[str]:
    lines = []
    lines.append("model: offline planner (set OPENAI_API_KEY to use an LLM)" if settings.offline_model
                 else f"model: {settings.llm_model} at {settings.openai_base_url or 'the OpenAI API'}")
    lines.append(f"travel data: {settings.travel_data}")
    if settings.db_url:
        from bot.store.postgres.connect import redact

        lines.append(f"store: PostgreSQL at {redact(settings.db_url)}")
    else:
        lines.append(f"store: SQLite file {settings.db_path}")
    if settings.telegram_bot_token:
        lines.append("telegram: " + ("webhook" if settings.telegram_webhook_url else "long polling"))
    if settings.slack_bot_token:
        lines.append("slack: " + ("socket mode" if settings.slack_app_token else "events API at /slack/events"))
    if settings.web_token:
        lines.append("web chat: BOT_WEB_TOKEN required (open the page and enter it once)")
    return lines


async def serve(settings: Settings, logs: ChatLogContext | None = None) -> None:
    async with contextlib.AsyncExitStack() as resources:
        await _serve(settings, resources, logs)


def stop_on_signals() -> asyncio.Event:
    """An event SIGINT and SIGTERM set. Event loops without signal support (Windows) raise
    NotImplementedError: there Ctrl-C still ends the process as KeyboardInterrupt."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


async def _serve(settings: Settings, resources: contextlib.AsyncExitStack, logs: ChatLogContext | None) -> None:
    runtime = assemble(settings, resources, serve_http=True, logs=logs)
    stop = stop_on_signals()
    # stops what it started and raises StartupError when a part fails
    await runtime.start(reach_timeout(), before_serving=freeze_startup_heap)
    assert runtime.server is not None
    print(f"Travel bot ready: open {runtime.server.base_url} in a browser", flush=True)
    for line in describe(settings):
        print("  " + line, flush=True)
    try:
        await stop.wait()
    finally:
        print("shutting down ...", flush=True)
        await runtime.stop()


async def chat(settings: Settings, logs: ChatLogContext | None = None) -> None:
    async with contextlib.AsyncExitStack() as resources:
        await _chat(settings, resources, logs)


async def _chat(settings: Settings, resources: contextlib.AsyncExitStack, logs: ChatLogContext | None) -> None:
    surface = ConsoleSurface()
    runtime = assemble(settings, resources, serve_http=False, extra=[surface], logs=logs)
    stop = stop_on_signals()  # Ctrl-C ends the chat at once, cleanly
    await runtime.start(reach_timeout(), before_serving=freeze_startup_heap)
    for line in describe(settings):
        print(line, flush=True)
    try:
        await run_console(runtime.manager, surface, stop=stop)
    finally:
        await runtime.stop()


FIX = "set it in the environment or in .env; see README, Configuration"


def load_settings() -> Settings | None:
    """The settings, or None after printing one "configuration error:" line per problem."""
    try:
        settings = Settings()
    except ValidationError as exc:  # a bad setting is the person's to fix: say which and how
        for err in exc.errors(include_url=False):
            name = str(err["loc"][0]).upper() if err["loc"] else "?"
            shown = "<hidden>" if "TOKEN" in name or "SECRET" in name or "KEY" in name else repr(err.get("input"))
            print(f"configuration error: {name}={shown}: {err['msg'].removeprefix('Value error, ')} ({FIX})", file=sys.stderr)
        return None
    problems = settings.problems()
    for name, what in problems:
        print(f"configuration error: {name}: {what} ({FIX})", file=sys.stderr)
    if problems:
        return None
    return settings


def _exit_soon(code: int, grace_s: float = 2.0) -> None:
    """After a failed start: if a library left a non-daemon thread behind, do not hang on it."""
    def force() -> None:
        sys.stderr.flush()
        os._exit(code)

    timer = threading.Timer(grace_s, force)
    timer.daemon = True
    timer.start()


def entry() -> None:
    """The `tripbot` console script (and `python bot.py`). A failed start has already stopped
    what it started and said why; the interpreter's own teardown of everything imported (most
    of a second) is skipped then, so a process manager sees the exit at once."""
    code = main(sys.argv[1:], prog=os.path.basename(sys.argv[0]) or "tripbot")
    if code:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None, prog: str = "tripbot") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="A travel-planning agent bot for Telegram, Slack and the web. "
        "Configuration comes from the environment and .env (see README).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("serve", help="serve every configured surface and the web chat (the default)")
    sub.add_parser("chat", help="chat with the bot in this terminal")
    check = sub.add_parser("check", help="validate the configuration, reach each configured service once, and exit")
    check.add_argument("--live", action="store_true", help="make one real query to each configured travel provider "
                       "and print what it answered")
    args = parser.parse_args(argv)
    settings = load_settings()
    if settings is None:
        return 2
    logs = ChatLogContext()
    if settings.log_format == "json":
        logging.basicConfig(level=settings.log_level.upper(), handlers=[json_handler(logs, sys.stderr)])
    else:
        logging.basicConfig(
            level=settings.log_level.upper(), stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    # httpx logs every request URL at INFO, and the Bot API's URLs carry the token
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger().level))
    if args.command in ("chat", "check"):
        logging.getLogger().setLevel(logging.WARNING)  # keep the terminal for the conversation
    try:
        if args.command == "check":
            from tripbot.check import run_checks

            return asyncio.run(run_checks(settings, live=args.live))
        if args.command == "chat":
            asyncio.run(chat(settings, logs))
        else:
            asyncio.run(serve(settings, logs))
    except StartupError as exc:
        print(f"startup error: {exc}", file=sys.stderr, flush=True)
        _exit_soon(1)
        return 1
    except StoreUnavailable as exc:  # e.g. PostgreSQL down at start: say what to fix, no traceback
        print(f"startup error: {exc}. The bot did not start (exit code {EXIT_STORE_UNAVAILABLE}).",
              file=sys.stderr, flush=True)
        _exit_soon(EXIT_STORE_UNAVAILABLE)
        return EXIT_STORE_UNAVAILABLE
    except KeyboardInterrupt:  # Ctrl-C before the signal handlers were in place
        print("interrupted", file=sys.stderr, flush=True)
        _exit_soon(130)
        return 130
    return 0


if __name__ == "__main__":
    entry()
