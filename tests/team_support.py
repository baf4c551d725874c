"""A scripted model for team trips: turn 1 asks each traveller (ask_human with `to`, all at once),
turn 2 submits a party plan built from the answers. The reply depends only on the conversation,
so a restarted process continues it; `turns` lists what it did, so a test can assert every turn
was used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.model import TokenUsage, ToolChoice
from agent_core.schema import Function, Message, Role, ToolCall

DAY, LAST = "2026-12-12", "2026-12-14"
HOMES = {"Beijing": ("北京南", "G1", "08:00", "13:00", 590.5), "Shanghai": ("上海虹桥", "G7", "06:30", "07:10", 74.0),
         "Shenzhen": ("深圳北", "G9", "06:40", "11:20", 586.0)}


def team_request(labels: Sequence[str]) -> str:
    cities = list(HOMES)
    return "offsite in Hangzhou, 12-14 December, for " + ", ".join(
        f"{label} ({cities[i]})" for i, label in enumerate(labels))


def question_for(label: str) -> str:
    return f"When can you leave on {DAY}, {label.strip('<@>')}?"


def party_plan(labels: Sequence[str]) -> dict[str, Any]:
    party = []
    for label, (city, (station, number, dep, arr, fare)) in zip(labels, HOMES.items(), strict=False):
        party.append({"name": label, "home_city": city, "legs": [
            {"kind": "train", "number": number, "origin": station, "destination": "杭州东", "origin_city": city,
             "destination_city": "Hangzhou", "depart": f"{DAY} {dep}", "arrive": f"{DAY} {arr}", "price": fare},
            {"kind": "train", "number": f"{number}0", "origin": "杭州东", "destination": station,
             "origin_city": "Hangzhou", "destination_city": city, "depart": f"{LAST} 16:00", "arrive": f"{LAST} 20:00",
             "price": fare},
        ]})
    plan: dict[str, Any] = {
        "title": "Team offsite in Hangzhou", "origin_city": ", ".join(HOMES), "destination_city": "Hangzhou",
        "start_date": DAY, "end_date": LAST, "travellers": len(party), "party": party,
        "stays": [{"hotel_id": "h-hz-1", "name": "West Lake Hotel", "city": "Hangzhou", "checkin_date": DAY,
                   "checkout_date": LAST, "nights": 2, "price_per_night": 600, "total": 1200}],
        "visits": [{"poi_id": "p-hz-1", "name": "West Lake", "city": "Hangzhou", "date": DAY, "start": "14:30",
                    "duration_min": 120, "ticket_price": 10}],
    }
    total = sum(leg["price"] for p in party for leg in p["legs"]) + 1200 + 10 * len(party)
    plan["total_cost"] = total
    return plan


def _call(name: str, arguments: dict[str, Any], call_id: str) -> ToolCall:
    return ToolCall(id=call_id, function=Function(name=name, arguments=json.dumps(arguments, ensure_ascii=False)))


@dataclass
class TeamScript:
    labels: tuple[str, ...]
    name: str = "scripted-team-trip"
    turns: list[str] = field(default_factory=list)  # "ask", "plan": what each call did
    answers: dict[str, str] = field(default_factory=dict)  # the tool results the plan was made from

    async def ask_tool(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       tool_choice: ToolChoice = "auto", usage: TokenUsage | None = None) -> Message:
        results = {m.tool_call_id: m.content or "" for m in messages if m.role is Role.TOOL and m.name == "ask_human"}
        if not results:
            self.turns.append("ask")
            calls = [_call("ask_human", {"inquire": question_for(label), "to": label}, f"call_ask_{i}")
                     for i, label in enumerate(self.labels)]
            return Message.assistant(None, calls)
        self.turns.append("plan")
        self.answers = {k: v for k, v in results.items() if k is not None}
        summary = "Team plan: " + "; ".join(f"{k}={v[:40]}" for k, v in sorted(self.answers.items()))
        call = _call("submit_plan", {"summary": summary, "plan": party_plan(self.labels)}, f"call_plan_{len(self.turns)}")
        return Message.assistant(None, [call])
