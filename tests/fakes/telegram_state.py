"""The data the fake Bot API keeps: chats, users, stored messages, rate bookkeeping, violations."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.telegram_html import Entity

PER_CHAT_INTERVAL_S = 1.0  # Telegram: avoid more than one message per second in a chat
GROUP_PER_MINUTE = 20  # Telegram: at most 20 messages per minute in a group
GLOBAL_PER_SECOND = 30  # Telegram: about 30 messages per second overall


@dataclass(frozen=True, slots=True)
class FakeUser:
    id: int
    first_name: str = "Ann"
    username: str | None = None
    language_code: str | None = "en"
    is_bot: bool = False

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.username:
            out["username"] = self.username
        if self.language_code:
            out["language_code"] = self.language_code
        return out


@dataclass
class Document:
    file_id: str
    file_name: str
    mime_type: str
    content: bytes

    def wire(self) -> dict[str, Any]:
        return {"file_id": self.file_id, "file_unique_id": self.file_id[-8:], "file_name": self.file_name,
                "mime_type": self.mime_type, "file_size": len(self.content)}


@dataclass(slots=True)
class StoredMessage:
    message_id: int
    chat_id: int
    from_bot: bool
    text: str  # what a person sees (entities parsed)
    raw: str = ""  # exactly as the bot sent it
    parse_mode: str | None = None
    entities: list[Entity] = field(default_factory=list)
    reply_markup: dict[str, Any] | None = None
    reply_to: int | None = None
    user: FakeUser | None = None
    kind: str = "text"
    date: int = field(default_factory=lambda: int(time.time()))
    edits: list[str] = field(default_factory=list)  # earlier texts, oldest first
    sent_at: float = field(default_factory=time.monotonic)
    document: Document | None = None  # sendDocument: the file as uploaded
    thread: int | None = None  # the forum topic it is in (message_thread_id); None: the chat itself
    topic_name: str | None = None  # kind "topic_created": the service message that opened a topic
    inline_id: str | None = None  # a guest bot's answer (answerGuestQuery): its inline_message_id

    @property
    def buttons(self) -> list[str]:
        rows = (self.reply_markup or {}).get("inline_keyboard") or []
        return [b.get("text", "") for row in rows for b in row]

    @property
    def force_reply(self) -> bool:
        return bool((self.reply_markup or {}).get("force_reply"))

    def summary(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id, "from_bot": self.from_bot, "text": self.text, "raw": self.raw,
            "parse_mode": self.parse_mode, "reply_markup": self.reply_markup, "reply_to": self.reply_to,
            "edits": list(self.edits), "kind": self.kind, "thread": self.thread,
        }


@dataclass(slots=True)
class ChatState:
    id: int
    type: str  # private | group | supergroup
    title: str | None = None
    messages: dict[int, StoredMessage] = field(default_factory=dict)
    next_message_id: int = 1
    last_op_at: float | None = None
    recent_ops: deque[float] = field(default_factory=deque)
    flood_until: float = 0.0
    flood_told: bool = False  # a 429 was already sent for the current flood window
    blocked: bool = False
    fail_sends: int = 0  # sendMessage calls (with `fail_containing` in the text) still to answer 502
    fail_containing: str = ""
    actions: list[tuple[float, str]] = field(default_factory=list)
    action_threads: list[int | None] = field(default_factory=list)  # the topic each action named
    forum: bool = False  # a supergroup with topics (or a private chat with the bot's topics on)
    topics: dict[int, str] = field(default_factory=dict)  # open topics: message_thread_id -> name
    deleted_topics: set[int] = field(default_factory=set)
    member: bool = True  # False: the bot is used there as a guest only (Bot API 10.0)

    def wire(self, user: FakeUser | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.type == "private":
            if user is not None:
                out["first_name"] = user.first_name
        else:
            out["title"] = self.title or f"Group {self.id}"
            if self.forum:
                out["is_forum"] = True
        return out

    def topic_of(self, thread: int | None) -> int | None:
        """The topic a send names, checked as Telegram checks it: a deleted topic, or one this
        chat does not have, is "message thread not found" (raised as LookupError)."""
        if thread is None:
            return None
        if thread in self.deleted_topics or thread not in self.topics:
            raise LookupError("message thread not found")
        return thread

    def new_id(self) -> int:
        mid = self.next_message_id
        self.next_message_id += 1
        return mid


@dataclass(frozen=True, slots=True)
class DraftCall:
    """One sendMessageDraft the fake accepted."""

    chat_id: int
    draft_id: int
    text: str  # "": the "Thinking…" placeholder (Bot API 10.0)
    thread: int | None
    can_stop: bool  # Bot API 10.3: a stop button on the draft
    keep_on_stop: bool
    at: float


@dataclass(frozen=True, slots=True)
class Violation:
    kind: str  # chat | group | global | ignored_retry_after
    chat_id: int
    method: str
    at: float


@dataclass(frozen=True, slots=True)
class RequestRecord:
    at: float
    method: str
    chat_id: int | None
    ok: bool
    error: str | None = None


class RateBook:
    """Counts what Telegram would call flooding. Times are monotonic seconds of arrival; Telegram's
    seconds last `time_scale` of ours (tests/fakes/pace.py)."""

    def __init__(self, time_scale: float = 1.0) -> None:
        self.global_ops: deque[float] = deque()
        self.violations: list[Violation] = []
        self.chat_interval = PER_CHAT_INTERVAL_S * time_scale
        self.minute = 60 * time_scale
        self.second = 1.0 * time_scale

    def record(self, chat: ChatState, method: str, now: float) -> float | None:
        """Register one message or edit; returns the wait Telegram would demand (our seconds), or None."""
        wait: float | None = None
        if chat.last_op_at is not None and now - chat.last_op_at < self.chat_interval:
            self.violations.append(Violation("chat", chat.id, method, now))
            wait = self.chat_interval - (now - chat.last_op_at)
        if chat.type != "private":
            while chat.recent_ops and now - chat.recent_ops[0] >= self.minute:
                chat.recent_ops.popleft()
            if len(chat.recent_ops) >= GROUP_PER_MINUTE:
                self.violations.append(Violation("group", chat.id, method, now))
                wait = max(wait or 0, self.minute - (now - chat.recent_ops[0]))
            chat.recent_ops.append(now)
        while self.global_ops and now - self.global_ops[0] >= self.second:
            self.global_ops.popleft()
        if len(self.global_ops) >= GLOBAL_PER_SECOND:
            self.violations.append(Violation("global", chat.id, method, now))
            wait = max(wait or 0, self.second - (now - self.global_ops[0]))
        self.global_ops.append(now)
        chat.last_op_at = now
        return wait
