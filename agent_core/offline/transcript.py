"""Reading a conversation back into facts: the planner keeps no state between calls.

Runs are resumed from the store after restarts, so everything the planner knows comes from
the messages: the run clock in the system prompt, what the person wrote, the questions the
planner asked (their slot is in the tool call id, "call_off_<n>_<slot>") and the answers, the
tool results, and the plans it submitted before.

Only a person's words are turns (agent_core.notes tells them from the bot's own notes): a
review note asks for the plan again from the same results, an approver's rejection passes on
the approver's reason as a turn, and a nudge is not the planner's concern.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agent_core.notes import origin_of
from agent_core.prompts.travel import RunClock, read_run_clock
from agent_core.schema import Message, Origin, Role
from tools.plan import TripPlan

CALL_ID_PREFIX = "call_off_"
_SLOT_RE = re.compile(rf"^{CALL_ID_PREFIX}\d+_(?P<slot>[a-z][a-z0-9_]*)$")
INTRO_MARK = "[offline planner]"
_REASON = re.compile(r"(?:Their reason|理由)[:：]\s*(?P<why>.+?)(?:\n|$)")


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    call_id: str
    name: str
    arguments: dict[str, Any]
    output: str | None  # None while unanswered
    ok: bool

    def json(self) -> Any:
        """The output as JSON, or None when it is not JSON (or an error)."""
        if not self.ok or self.output is None:
            return None
        try:
            return json.loads(self.output)
        except json.JSONDecodeError:
            return None


@dataclass(frozen=True, slots=True)
class Turn:
    """Something the person said: a message, or an answer to one of the planner's questions."""

    text: str
    slot: str | None = None  # the question's slot when this is an answer
    options: tuple[str, ...] = ()
    question: str | None = None
    plans_before: int = 0  # how many plans had been given when it was said
    answered_before: bool = False  # a final answer (a plan, or why there is none) had been given

    @property
    def after_plan(self) -> bool:
        """Said after a plan had been given (it may change that trip, or start another)."""
        return self.plans_before > 0
    sender: str | None = None  # who said it, in a group ("Bo (@bo)")


@dataclass(slots=True)
class Transcript:
    clock: RunClock | None
    turns: list[Turn] = field(default_factory=list)
    # tool results since the person's last message (what the current request has gathered)
    phase: list[ToolOutcome] = field(default_factory=list)
    last_plan: TripPlan | None = None  # the last plan submitted and accepted, in any phase
    plan_in_phase: bool = False
    intro_given: bool = False
    calls_so_far: int = 0
    asks_in_phase: dict[str, int] = field(default_factory=dict)
    reviews: list[str] = field(default_factory=list)  # the Validator's notes since the last plan
    plans: list[TripPlan] = field(default_factory=list)  # every plan submitted and accepted, in order

    def latest(self, name: str) -> list[ToolOutcome]:
        return [o for o in self.phase if o.name == name and o.output is not None]


def slot_of(call_id: str) -> str | None:
    m = _SLOT_RE.match(call_id)
    return m.group("slot") if m else None


def _arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def read_transcript(messages: Sequence[Message]) -> Transcript:
    clock = read_run_clock(m.content or "" for m in messages if m.role is Role.SYSTEM)
    t = Transcript(clock=clock)
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    answered = False
    for msg in messages:
        if msg.role is Role.USER:
            text = (msg.content or "").strip()
            origin = origin_of(msg)
            if origin is Origin.REVIEW and text:
                t.reviews.append(text)  # plan again, searching again: a result may have been stale
                t.phase = []
                t.plan_in_phase = False
                continue
            if origin is Origin.SIGNOFF and (m := _REASON.search(text)):
                text = m.group("why").strip()  # the approver's reason is a change asked for
            elif origin is not Origin.PERSON:
                continue
            if text:
                sender = msg.sender.label() if msg.sender is not None else None
                t.turns.append(Turn(text, sender=sender, plans_before=len(t.plans), answered_before=answered))
                t.phase = []
                t.plan_in_phase = False
                t.asks_in_phase = {}
                t.reviews = []
        elif msg.role is Role.ASSISTANT:
            if msg.content and INTRO_MARK in msg.content:
                t.intro_given = True
            if msg.content and not msg.tool_calls:
                answered = True
            for tc in msg.tool_calls or []:
                t.calls_so_far += 1
                args = _arguments(tc.function.arguments)
                calls[tc.id] = (tc.function.name, args)
                if tc.function.name == "ask_human" and (slot := slot_of(tc.id)):
                    t.asks_in_phase[slot] = t.asks_in_phase.get(slot, 0) + 1
        elif msg.role is Role.TOOL and msg.tool_call_id:
            name, args = calls.get(msg.tool_call_id, (msg.name or "", {}))
            content = msg.content or ""
            ok = not content.startswith("Error:")
            if name == "ask_human":
                options = tuple(str(o) for o in args.get("options") or ())
                t.turns.append(Turn(content.strip(), slot_of(msg.tool_call_id), options, args.get("inquire")))
                continue
            t.phase.append(ToolOutcome(msg.tool_call_id, name, args, content, ok))
            if name == "submit_plan" and ok:
                answered = True
                try:
                    t.last_plan = TripPlan.model_validate(args.get("plan") or {})
                    t.plans.append(t.last_plan)
                    t.plan_in_phase = True
                except ValidationError:
                    pass
    return t
