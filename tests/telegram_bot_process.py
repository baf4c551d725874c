"""The real runtime with the Telegram surface as a separate process and a scripted model, for the
fan-out benchmark (the bot must not share an event loop with the fake it is measured by).

    python -m tests.telegram_bot_process --db PATH --api-base URL --token T [--latency-ms 200]
                                         [--deliveries FILE]

prints one JSON line once it polls; SIGTERM stops it. `--deliveries` appends one JSON line per
message the adapter delivered (adapters.telegram.lane.Delivery, monotonic seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from adapters.runtime import build_runtime, freeze_startup_heap
from adapters.telegram import TelegramAdapter
from adapters.telegram.lane import Delivery
from bot.settings import Settings
from tests.fakes.process import until_signalled
from tests.scripted_trip import ScriptedTrip
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

QUESTION = "Which day do you leave?"
DAYS = ("2026-05-01", "2026-05-02")


def _prompt(lang: str, now: Any, tz: str, loc: str | None) -> str:
    return f"You plan trips. Now: {now:%Y-%m-%d %H:%M} {tz}."


async def serve(args: argparse.Namespace) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, BOT_DB_PATH=args.db, BOT_VALIDATE="off", TELEGRAM_BOT_TOKEN=args.token,
        TELEGRAM_API_BASE_URL=args.api_base,
    )
    runtime = build_runtime(settings, model=ScriptedTrip(name="scripted-telegram-trip", latency_s=args.latency_ms / 1000,
                                             summary="Your plan for {day}.", questions=(QUESTION, QUESTION), days=DAYS),
                            tools=ToolCollection([AskHuman(), SubmitPlan(), Terminate()]), prompt=_prompt,
                            serve_http=False)
    adapter = next(a for a in runtime.adapters if isinstance(a, TelegramAdapter))
    sink = args.deliveries.open("a") if args.deliveries else None
    if sink is not None:
        def record(d: Delivery) -> None:
            sink.write(json.dumps(asdict(d)) + "\n")

        adapter.outbox.observers.append(record)
    await runtime.start(before_serving=freeze_startup_heap)  # as bot.py does
    print(json.dumps({"ready": True}), flush=True)
    await until_signalled()
    await runtime.stop()
    if sink is not None:
        sink.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--deliveries", type=Path, default=None)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
