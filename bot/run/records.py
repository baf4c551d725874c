"""Plain records the SessionManager hands to surfaces, and the agent factory it runs agents from."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from agent_core.agents import ToolCallAgent
from agent_core.agents.toolcall import visible_text
from agent_core.model import TokenUsage
from agent_core.notes import said_by_person
from agent_core.schema import Message, Role
from bot.surface import ChatKey, IncomingMessage, MessageKind
from tools.base import SharedLocation
from tools.plan import TripPlan


@dataclass(frozen=True, slots=True)
class PendingQuestion:
    tool_call_id: str
    question: str
    options: tuple[str, ...]
    asker_user_id: str
    posted_message_id: str | None
    deadline: float


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    state: str  # idle | working | asking | parked (asking, nothing held in memory)
    lang: str
    run_no: int
    steps: int


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    role: str  # user | assistant | question | answer
    text: str
    plan: TripPlan | None = None


@dataclass(slots=True)
class RunSpec:
    """Everything an agent factory needs to build the agent of one run (fresh or resumed)."""

    session_id: str
    lang: str
    messages: list[Message]
    steps_taken: int
    now: datetime
    location: SharedLocation | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    travellers: tuple[str, ...] = ()  # a team trip's travellers as the request names them


class AgentFactory(Protocol):
    def build(self, spec: RunSpec) -> ToolCallAgent: ...


def message_to_json(msg: IncomingMessage) -> str:
    loc = msg.location
    return json.dumps(
        {
            "chat": str(msg.chat),
            "user_id": msg.user_id,
            "user_name": msg.user_name,
            "text": msg.text,
            "kind": msg.kind.value,
            "reply_to": msg.reply_to,
            "is_group": msg.is_group,
            "dedup_id": msg.dedup_id,
            "received_at": msg.received_at,
            "location": None if loc is None else [loc.latitude, loc.longitude, loc.label],
            "lang": msg.lang,
            "question_id": msg.question_id,
            "handle": msg.handle,
            "run": msg.run,
            "quoting": msg.quoting,
            "adopted_by": msg.adopted_by,
        },
        ensure_ascii=False,
    )


def message_from_json(raw: str) -> IncomingMessage:
    data = json.loads(raw)
    loc = data.get("location")
    return IncomingMessage(
        chat=ChatKey.parse(data["chat"]),
        user_id=data["user_id"],
        user_name=data.get("user_name", ""),
        text=data["text"],
        kind=MessageKind(data.get("kind", "text")),
        reply_to=data.get("reply_to"),
        is_group=bool(data.get("is_group")),
        dedup_id=data.get("dedup_id", ""),
        received_at=float(data.get("received_at", 0)),
        location=None if not loc else SharedLocation(float(loc[0]), float(loc[1]), loc[2]),
        lang=data.get("lang", ""),
        question_id=data.get("question_id"),
        handle=data.get("handle", ""),
        run=data.get("run"),
        quoting=data.get("quoting", ""),
        adopted_by=data.get("adopted_by", ""),
    )


def location_to_json(loc: SharedLocation | None) -> str | None:
    if loc is None:
        return None
    return json.dumps({"latitude": loc.latitude, "longitude": loc.longitude, "label": loc.label}, ensure_ascii=False)


def location_from_json(raw: str | None) -> SharedLocation | None:
    if not raw:
        return None
    data = json.loads(raw)
    return SharedLocation(float(data["latitude"]), float(data["longitude"]), data.get("label"))


def history_from_messages(messages: Sequence[Message]) -> list[HistoryEntry]:
    """What a person saw: their messages, questions and answers, final replies (with plans)."""
    out: list[HistoryEntry] = []
    questions: dict[str, str] = {}
    last_plan: TripPlan | None = None
    for msg in messages:
        if msg.role is Role.USER and msg.content and said_by_person(msg):  # the bot's own notes are never shown
            out.append(HistoryEntry("user", msg.content))
        elif msg.role is Role.ASSISTANT and msg.tool_calls:
            for call in msg.tool_calls:
                try:
                    args = call.parsed_arguments()
                except ValueError:
                    continue
                if call.function.name == "ask_human" and isinstance(args.get("inquire"), str):
                    questions[call.id] = args["inquire"]
                    out.append(HistoryEntry("question", args["inquire"]))
                elif call.function.name == "submit_plan" and isinstance(args.get("plan"), dict):
                    try:
                        last_plan = TripPlan.model_validate(args["plan"])
                    except ValueError:
                        last_plan = None
        elif msg.role is Role.TOOL and msg.tool_call_id in questions and msg.content:
            out.append(HistoryEntry("answer", msg.content))
        elif msg.role is Role.ASSISTANT and msg.content:
            out.append(HistoryEntry("assistant", visible_text(msg.content), last_plan))
            last_plan = None
    return out
