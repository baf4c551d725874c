"""What the store holds and hands back: one dataclass per table row, and the records writes take.

A row class's fields are its table's columns, by name and in order, in both databases: the
reads select `columns(SessionRow)` and build the row with `loaded`, and the writes store a row
with `stored` (SQLite inserts its columns by name, PostgreSQL's write functions take it as JSON
and fill the table's record from it). So a new column is its migrations and its field here.

Column values: a tuple field is stored as JSON text (`options`, `approvers`), a bool as 0 or 1;
everything else as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, TypeVar

from agent_core.schema import Message

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: str
    chat_key: str
    state: str  # idle | working | asking | signoff (bot.chat.machine.ChatState); closed sessions are not read
    lang: str
    asker_id: str
    asker_name: str
    run_no: int
    run_steps: int
    request: str
    location: str | None  # JSON
    created_at: float
    updated_at: float
    run_started_at: float  # a resumed run keeps the "today" it started with
    prompt_tokens: int = 0  # token usage of this session (all its runs)
    completion_tokens: int = 0
    llm_calls: int = 0
    cost_usd: float = 0.0  # what those calls cost, at the price table of their time
    trace_parent: str = ""  # W3C traceparent of the current run's trace; '' when tracing is off


@dataclass(frozen=True, slots=True)
class RunUsage:
    """What one segment of a run used, stored with its outcome: added to the session's totals
    and to its run's row (one row per run_no, across pauses and restarts)."""

    session_id: str
    run_no: int
    model: str
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    cost_usd: float
    steps: int  # the run's steps so far
    outcome: str  # paused | answered | failed | crashed | stopped


@dataclass(frozen=True, slots=True)
class RunRow:
    session_id: str
    run_no: int
    chat_key: str
    model: str
    segments: int
    steps: int
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    cost_usd: float
    outcome: str
    started_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class FeedbackRow:
    """A person's 👍 / 👎 on a run's plan (their latest press), with the run's chat."""

    session_id: str
    run_no: int
    chat_key: str
    user_id: str
    rating: str  # up | down
    at: float


@dataclass(frozen=True, slots=True)
class QuestionRow:
    session_id: str
    tool_call_id: str
    question: str
    options: tuple[str, ...]
    asker_id: str
    asked_at: float
    deadline: float
    posted_message_id: str | None
    status: str  # waiting | answered | expired | cancelled
    posted_after: int | None = None  # the last inbox id when it was posted: only later rows answer it
    remind_at: float | None = None  # when its one reminder is due; None once sent (or none wanted)
    addressee: str = ""  # the traveller it is for as the request names them ("@bo", "ana"); "" = the asker
    # the last inbox id before the first attempt to post it, recorded before that attempt and kept
    # across re-posts: what posted_after becomes once a posting is recorded (Store.record_watermark)
    first_post_after: int | None = None


@dataclass(frozen=True, slots=True)
class SignoffRow:
    """A finished team plan waiting for (or given) an approver's decision."""

    id: str
    session_id: str
    chat_key: str
    status: str  # waiting | rejecting | approved | rejected | expired | cancelled | superseded
    approvers: tuple[str, ...]  # platform user ids or @handles, as configured
    requested_at: float
    remind_at: float
    deadline: float
    reminded: bool = False
    decided_by: str | None = None  # who approved or rejected (while rejecting: who pressed Reject)
    decided_at: float | None = None
    reason: str | None = None

    @property
    def open(self) -> bool:
        return self.status in ("waiting", "rejecting")


@dataclass(frozen=True, slots=True)
class SuggestionRow:
    """A message from someone who may not make the change it asks for (bot.chat.rights), kept
    until the person who may make it says Yes (it becomes their change) or No."""

    id: str
    session_id: str
    chat_key: str
    status: str  # waiting | accepted | declined
    body: str  # the message, as its inbox row had it (IncomingMessage JSON): nothing of it is lost
    sender_id: str  # who suggested it
    asked_of: str  # who is asked to decide (the requester)
    created_at: float
    decided_by: str | None = None
    decided_at: float | None = None


@dataclass(frozen=True, slots=True)
class InboxRow:
    id: int
    platform: str
    dedup_id: str
    chat_key: str
    body: str  # IncomingMessage JSON, or the event's JSON
    received_at: float
    kind: str = "message"  # message | expired | remind | resume | undeliverable | reminder | overdue (a sign-off request's)
    noticed: bool = False  # its notice (held for the question, or steering the run) is queued


@dataclass(frozen=True, slots=True)
class ChatEvent:
    """Something that happened to a chat outside its own task (a deadline, a restart, a delivery
    outcome): written to its inbox, so the chat's task applies it in order with the messages."""

    chat_key: str
    kind: str  # expired | remind | resume | undeliverable | reminder | overdue (a sign-off request's)
    body: str  # JSON
    dedup_id: str  # the same event twice is stored once


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    session_id: str
    chat_key: str
    kind: str  # question | answer | notice | reminder | file
    body: str  # JSON (bot.delivery.bodies)
    created_at: float
    status: str = "pending"  # pending | sent | failed
    attempts: int = 0
    parts_sent: int = 0  # parts already delivered: never sent again
    message_id: str | None = None
    error: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class StoreCounts:
    """The gauges, read from the store when they are scraped."""

    questions_waiting: int
    sessions_asking: int
    outbox_pending: int
    outbox_failed: int
    inbox_pending: int


@dataclass(frozen=True, slots=True)
class TurnStart:
    """What starts a run: a user message taken from the inbox."""

    chat_key: str
    inbox_id: int
    message: Message
    lang: str
    asker_id: str
    asker_name: str
    request: str
    location: str | None
    new_session_id: str = ""  # the id a new session gets (empty: the store picks one)
    rejected_by: str = ""  # a re-plan after a rejected sign-off: who rejected it (stored with the turn)
    reason: str = ""
    trace_parent: str = ""  # the new run's trace (W3C traceparent), stored with the session


@dataclass(frozen=True, slots=True)
class ChatView:
    """What a chat's task reads before it takes its next row, in one read: the pending inbox
    rows (oldest first), the open session, and its waiting questions (when it asks)."""

    rows: list[InboxRow]
    session: SessionRow | None
    questions: list[QuestionRow]
    # the open session's messages when the store read them with the rest (PostgreSQL does while
    # rows are pending: the turn, answer or stop they bring reads them next); None: load_messages
    history: list[Message] | None = None


# -- columns and their values -------------------------------------------------------------------
def _kinds_of(cls: type) -> tuple[tuple[str, str], ...]:
    """(field, how it is stored: 'json' for a tuple, 'flag' for a bool, '' as it is)."""
    def kind(annotation: object) -> str:
        text = str(annotation)
        return "json" if text.startswith("tuple") else "flag" if text == "bool" else ""
    return tuple((f.name, kind(f.type)) for f in fields(cls))


_KINDS: Mapping[type, tuple[tuple[str, str], ...]] = MappingProxyType({
    cls: _kinds_of(cls) for cls in (SessionRow, RunUsage, RunRow, FeedbackRow, QuestionRow, SignoffRow,
                                    SuggestionRow, InboxRow, ChatEvent, OutboxRow, TurnStart)})


def _kinds(cls: type) -> tuple[tuple[str, str], ...]:
    return _KINDS.get(cls) or _kinds_of(cls)


def columns(cls: type, alias: str = "") -> str:
    """The row's columns for a SELECT, in field order (`alias`: a table alias to qualify them)."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + name for name, _ in _kinds(cls))


def stored(row: object) -> dict[str, Any]:
    """The row's column values, by column name."""
    values: dict[str, Any] = {}
    for name, kind in _kinds(type(row)):
        value = getattr(row, name)
        if kind == "json":
            value = json.dumps(list(value), ensure_ascii=False)
        elif kind == "flag":
            value = int(value)
        values[name] = value
    return values


def loaded(cls: type[R], values: Sequence[Any] | Mapping[str, Any]) -> R:
    """The row from its column values (in field order, or by column name)."""
    kinds = _kinds(cls)
    ordered = [values[name] for name, _ in kinds] if isinstance(values, Mapping) else list(values)
    for i, (_, kind) in enumerate(kinds):
        if kind == "json":
            ordered[i] = tuple(json.loads(str(ordered[i])))
        elif kind == "flag":
            ordered[i] = bool(ordered[i])
    return cls(*ordered)


def message_body(message: Message) -> str:
    """A message as the messages table stores it."""
    return message.model_dump_json(exclude_none=True)
