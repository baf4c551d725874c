"""CPU time of whole offline-planner conversations, tools included (target <= 200 ms each).

Prints one JSON line. Each conversation runs the planner turn by turn against the real sandbox
tools until it submits a plan (answering the date question where one is asked), as
`python bot.py chat` would, minus the store and the terminal.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_core.offline import OfflinePlanner
from agent_core.prompts import build_system_prompt
from agent_core.schema import Message
from agent_core.travel_agent import travel_toolset
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.signals import HumanInputRequired
from tools.travel import Gazetteer
from tools.travel.factory import build_sandbox_tools

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
REQUESTS = [
    ("zh", "下周五从北京去上海玩两天", ["下周五"]),
    ("zh", "去成都玩三天", ["明天"]),
    ("zh", "明天从上海去杭州，三天两晚，预算3000，坐高铁，酒店要含早餐", []),
    ("en", "Fly from Guangzhou to Chengdu on Dec 12, 4 nights, hotel with breakfast", []),
    ("en", "I want to go from Beijing to Xi'an for 3 days", ["next Friday"]),
]
TARGET_MS = 200.0


async def conversation(planner: OfflinePlanner, tools: ToolCollection, lang: str, text: str, answers: list[str]) -> int:
    answers = list(answers)
    messages = [Message.system(build_system_prompt(lang, NOW, "Asia/Shanghai", None)), Message.user(text)]
    for turn in range(1, 20):
        reply = await planner.ask_tool(messages, tools=tools.to_params())
        messages.append(reply)
        if not reply.tool_calls:
            return turn
        for call in reply.tool_calls:
            ctx = ToolContext(tool_call_id=call.id, now=NOW, lang=lang)
            try:
                result = await tools.execute(call.function.name, call.function.arguments, ctx)
            except HumanInputRequired:
                messages.append(Message.tool(answers.pop(0) if answers else "不知道", tool_call_id=call.id, name="ask_human"))
                continue
            messages.append(Message.tool(result.observation(), tool_call_id=call.id, name=call.function.name))
            if result.ends_run and result.ok:
                return turn
    raise RuntimeError(f"no plan for {text!r}")


def build_tools(gazetteer: Gazetteer) -> ToolCollection:
    """The sandbox travel tools, built the way bot.py builds them."""
    return travel_toolset(build_sandbox_tools(gazetteer))


async def main() -> dict[str, object]:
    gazetteer = Gazetteer.load()
    planner = OfflinePlanner(gazetteer)
    tools = build_tools(gazetteer)
    for lang, text, answers in REQUESTS:  # warm up imports and regex caches
        await conversation(planner, tools, lang, text, answers)
    samples: list[float] = []
    turns = 0
    for _ in range(5):
        for lang, text, answers in REQUESTS:
            start = time.process_time()
            turns += await conversation(planner, tools, lang, text, answers)
            samples.append((time.process_time() - start) * 1000)
    median = statistics.median(samples)
    return {
        "bench": "offline_planner_conversation",
        "conversations": len(samples),
        "cpu_ms_median": round(median, 2),
        "cpu_ms_max": round(max(samples), 2),
        "turns_mean": round(turns / len(samples), 2),
        "target_ms": TARGET_MS,
        "ok": median <= TARGET_MS,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
