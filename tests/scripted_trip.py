"""The scripted trip model the surface tests and benchmarks share: turn 1 asks the day (with
options), turn 2 submits the plan for the day answered. The reply depends only on the
conversation, so a restarted process continues it.

`latency_s` delays every reply (like a real model); `gate`, when set, holds every reply until it
is opened, so a test can act while a run is provably mid-step (`held` is set while it waits).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.model import TokenUsage, ToolChoice
from agent_core.schema import Function, Message, Role, ToolCall

QUESTION_EN = "Which day do you want to leave?"
QUESTION_ZH = "你想哪天出发？"
DAYS = ("2025-05-01", "2025-05-02")
SUMMARY = "Here is your trip on {day}: G1 to Shanghai, one night at the Bund Riverside Hotel."


def trip_plan(day: str) -> dict[str, Any]:
    nxt = f"{day[:-2]}{int(day[-2:]) + 1:02d}"
    return {
        "title": "Beijing → Shanghai", "origin_city": "北京", "destination_city": "上海",
        "start_date": day, "end_date": nxt,
        "legs": [{"kind": "train", "number": "G1", "origin": "北京南", "destination": "上海虹桥",
                  "depart": f"{day} 07:00", "arrive": f"{day} 11:29", "seat": "二等座", "price": 553}],
        "stays": [{"hotel_id": "h-sh-1", "name": "Bund Riverside Hotel", "city": "上海", "checkin_date": day,
                   "checkout_date": nxt, "nights": 1, "price_per_night": 480, "total": 480, "breakfast": True}],
        "visits": [{"poi_id": "p-1", "name": "The Bund", "city": "上海", "date": day, "start": "15:00",
                    "duration_min": 90}],
        "total_cost": 1033, "alternatives": ["G3 at 09:00 if G1 is sold out"],
        "notes": ["Bring your ID card for the train."], "data_source": "sandbox",
    }


def tool_call(name: str, arguments: dict[str, Any], content: str | None = None) -> Message:
    call = ToolCall(id=f"call_{uuid.uuid4().hex[:16]}", function=Function(name=name, arguments=json.dumps(arguments)))
    return Message.assistant(content, [call])


@dataclass
class ScriptedTrip:
    name: str = "scripted-trip"
    latency_s: float = 0.0
    summary: str = SUMMARY  # formatted with {day}
    ask_note: str | None = None  # the text that goes with the question call, shown as a step
    questions: tuple[str, str] = (QUESTION_EN, QUESTION_ZH)  # English, Chinese (by the first message)
    days: tuple[str, ...] = DAYS
    gate: asyncio.Event | None = None
    calls: int = 0
    held: asyncio.Event = field(default_factory=asyncio.Event)

    async def ask_tool(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       tool_choice: ToolChoice = "auto", usage: TokenUsage | None = None) -> Message:
        self.calls += 1
        if self.gate is not None:
            self.held.set()
            await self.gate.wait()
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if usage is not None:
            usage.add(100, 20)
        answers = [m for m in messages if m.role is Role.TOOL and m.name == "ask_human"]
        if not answers:
            first_user = next((m.content or "" for m in messages if m.role is Role.USER), "")
            zh = any("\u4e00" <= ch <= "\u9fff" for ch in first_user)
            question = self.questions[1] if zh else self.questions[0]
            return tool_call("ask_human", {"inquire": question, "options": list(self.days)}, content=self.ask_note)
        day = next((d for d in self.days if d in (answers[-1].content or "")), self.days[0])
        return tool_call("submit_plan", {"summary": self.summary.format(day=day), "plan": trip_plan(day)})
