"""The real runtime with the Telegram surface as a separate process and a scripted model, for the
fan-out benchmark (the bot must not share an event loop with the fake it is measured by).

    python -m tests.telegram_bot_process --db PATH --api-base URL --token T [--latency-ms 200]
                                         [--deliveries FILE]

prints one JSON line once it polls; SIGTERM stops it. `--deliveries` appends one JSON line per
message the adapter delivered (adapters.telegram.pacing.Delivery, monotonic seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import uuid
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from adapters.runtime import build_runtime, freeze_startup_heap
from adapters.telegram import TelegramAdapter
from adapters.telegram.pacing import Delivery
from agent_core.model import TokenUsage, ToolChoice
from agent_core.schema import Function, Message, Role, ToolCall
from bot.settings import Settings
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

QUESTION = "Which day do you leave?"
DAYS = ("2026-05-01", "2026-05-02")


def trip_plan(day: str) -> dict[str, Any]:
    nxt = f"{day[:-2]}{int(day[-2:]) + 1:02d}"
    return {
        "title": "Beijing → Shanghai", "origin_city": "北京", "destination_city": "上海", "start_date": day,
        "end_date": nxt,
        "legs": [{"kind": "train", "number": "G1", "origin": "北京南", "destination": "上海虹桥",
                  "depart": f"{day} 07:00", "arrive": f"{day} 11:29", "seat": "二等座", "price": 553}],
        "stays": [{"hotel_id": "h1", "name": "Bund Riverside Hotel", "city": "上海", "checkin_date": day,
                   "checkout_date": nxt, "nights": 1, "price_per_night": 480, "total": 480}],
        "total_cost": 1033, "notes": ["Sandbox data: example prices."], "data_source": "sandbox",
    }


class ScriptedTrip:
    """Turn 1 asks the day (with options); turn 2 submits the plan for the day answered."""

    name = "scripted-telegram-trip"

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s

    async def ask_tool(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       tool_choice: ToolChoice = "auto", usage: TokenUsage | None = None) -> Message:
        await asyncio.sleep(self.latency_s)
        answers = [m for m in messages if m.role is Role.TOOL and m.name == "ask_human"]
        if not answers:
            return _call("ask_human", {"inquire": QUESTION, "options": list(DAYS)})
        day = next((d for d in DAYS if d in (answers[-1].content or "")), DAYS[0])
        return _call("submit_plan", {"summary": f"Your plan for {day}.", "plan": trip_plan(day)})


def _call(name: str, arguments: dict[str, Any]) -> Message:
    call = ToolCall(id=f"call_{uuid.uuid4().hex[:16]}", function=Function(name=name, arguments=json.dumps(arguments)))
    return Message.assistant(None, [call])


def _prompt(lang: str, now: Any, tz: str, loc: str | None) -> str:
    return f"You plan trips. Now: {now:%Y-%m-%d %H:%M} {tz}."


async def serve(args: argparse.Namespace) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, BOT_DB_PATH=args.db, BOT_VALIDATE="off", TELEGRAM_BOT_TOKEN=args.token,
        TELEGRAM_API_BASE_URL=args.api_base,
    )
    runtime = build_runtime(settings, model=ScriptedTrip(args.latency_ms / 1000),
                            tools=ToolCollection([AskHuman(), SubmitPlan(), Terminate()]), prompt=_prompt,
                            serve_http=False)
    adapter = next(a for a in runtime.adapters if isinstance(a, TelegramAdapter))
    sink = args.deliveries.open("a") if args.deliveries else None
    if sink is not None:
        def record(d: Delivery) -> None:
            sink.write(json.dumps(asdict(d)) + "\n")

        adapter.outbox.observers.append(record)
    await runtime.start()
    freeze_startup_heap()  # as bot.py does
    print(json.dumps({"ready": True}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
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
