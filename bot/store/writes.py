"""The store's writes, written once for both databases: each is a name and its record.

A write method here turns its arguments into the write's record (rows as bot.store.rows
dataclasses, messages as their stored bodies, the time it is stamped with) and hands it to the
store's one primitive, abstract here, `_write(name, record)`:

- SQLite runs the function of that name in bot.store.sqlite.writes with the record as keyword
  arguments, on its writer thread;
- PostgreSQL calls the server function `bot_<name>(record)` with the record as one jsonb
  argument (migrations/postgres/0014_one_record_writes.sql), carrying the chat's fence.

So a write is stated once in Python, once in each database's own language, and a new column of a
row is its field in bot.store.rows (SQLite inserts a row's columns by name, PostgreSQL fills the
table's record from the JSON). Every write but `add_inbox`, `add_events` and `retry_outbox`
(anyone may store an update or queue a retry) carries the lease of the chat it changes
(`fenced=True`: PostgresStore.fenced); each returns once committed.
"""

from __future__ import annotations

import json
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from agent_core.schema import Message
from bot.store.rows import (
    ChatEvent,
    QuestionRow,
    RunUsage,
    SessionRow,
    SignoffRow,
    SuggestionRow,
    TurnStart,
    loaded,
    message_body,
)

Record = dict[str, Any]
ERROR_CHARS = 500  # an error kept with a row


def _ids(values: Sequence[Any] | None) -> list[int]:
    return [int(v) for v in values or ()]


class StoreWrites(ABC):
    _row: Callable[..., Awaitable[tuple[Any, ...] | None]]  # a read (bot.store.reads.StoreReads)

    @abstractmethod
    async def _write(self, name: str, record: Record, *, fenced: bool = True) -> Any:
        """The store's one write: the write `name` carried out with `record`, returning once committed."""

    # -- the inbox: every message and every event of a chat -----------------------------------
    async def add_inbox(self, platform: str, dedup_id: str, chat_key: str, body: str, *,
                        notify: bool = True) -> int | None:
        inbox_id = await self._write("add_inbox", {"platform": platform, "dedup_id": dedup_id, "chat_key": chat_key,
                                                   "body": body, "received_at": time.time(), "notify": notify},
                                     fenced=False)
        return None if inbox_id is None else int(inbox_id)

    async def add_events(self, events: Sequence[ChatEvent]) -> None:
        if events:
            await self._write("add_events", {"events": list(events), "now": time.time()}, fenced=False)

    async def finish_inbox(self, inbox_id: int, *, drop_earlier: bool = False) -> None:
        await self._write("finish_inbox", {"inbox_id": inbox_id, "drop_earlier": drop_earlier})

    async def fail_inbox(self, inbox_id: int, error: str) -> None:
        await self._write("fail_inbox", {"inbox_id": inbox_id, "error": error[:ERROR_CHARS]})

    async def notice_inbox(self, inbox_id: int, chat_key: str, session_id: str, body: str) -> int:
        return int(await self._write("notice_inbox", {"inbox_id": inbox_id, "chat_key": chat_key,
                                                      "session_id": session_id, "body": body, "now": time.time()}))

    # -- sessions and runs ---------------------------------------------------------------------
    async def remember_location(self, chat_key: str, location: str, lang: str) -> None:
        await self._write("remember_location", {"chat_key": chat_key, "location": location, "lang": lang,
                                                "new_session_id": uuid.uuid4().hex, "now": time.time()})

    async def start_turn(self, turn: TurnStart) -> SessionRow:
        turn = replace(turn, new_session_id=turn.new_session_id or uuid.uuid4().hex)
        return loaded(SessionRow, await self._write("start_turn", {"turn": turn, "now": time.time()}))

    async def append(
        self, session_id: str, messages: Sequence[Message], *, step: int, inbox_done: Sequence[int] = ()
    ) -> None:
        await self._write("append_step", {"session_id": session_id, "messages": _bodies(messages), "step": step,
                                          "inbox_done": list(inbox_done)})

    async def pause(
        self, session_id: str, messages: Sequence[Message], questions: Sequence[QuestionRow], *,
        postings: Sequence[str], step: int, inbox_done: Sequence[int] = (), usage: RunUsage | None = None,
    ) -> list[int]:
        if len(postings) != len(questions):
            raise ValueError(f"{len(questions)} questions with {len(postings)} postings")
        asked = [replace(q, session_id=session_id, status="waiting", posted_message_id=None, posted_after=None,
                         first_post_after=None)
                 for q in questions]
        return _ids(await self._write("pause", {
            "session_id": session_id, "messages": _bodies(messages), "questions": asked, "postings": list(postings),
            "step": step, "inbox_done": list(inbox_done), "usage": usage, "now": time.time()}))

    async def finish_run(
        self, session_id: str, messages: Sequence[Message], *, outbox: Sequence[tuple[str, str]] = (),
        inbox_done: Sequence[int] = (), signoff: SignoffRow | None = None, usage: RunUsage | None = None,
    ) -> list[int]:
        return _ids(await self._write("finish_run", {
            "session_id": session_id, "messages": _bodies(messages), "outbox": [list(o) for o in outbox],
            "inbox_done": list(inbox_done), "signoff": signoff, "usage": usage, "now": time.time()}))

    async def interrupt(
        self, session_id: str, fillers: Sequence[Message], *, close: bool, notice: str | None = None
    ) -> None:
        await self._write("interrupt", {"session_id": session_id, "messages": _bodies(fillers), "close": close,
                                        "notice": notice, "now": time.time()})

    async def close_session(self, chat_key: str) -> None:
        await self._write("close_session", {"chat_key": chat_key})

    async def add_usage(self, usage: RunUsage) -> None:
        await self._write("add_usage", {"usage": usage, "now": time.time()})

    # -- questions -----------------------------------------------------------------------------
    async def resolve_question(
        self, session_id: str, tool_call_id: str, answer: Message, *, status: str, inbox_id: int | None
    ) -> bool:
        return bool(await self._write("resolve_question", {
            "session_id": session_id, "tool_call_id": tool_call_id, "message": message_body(answer), "status": status,
            "inbox_id": inbox_id, "now": time.time()}))

    async def remind(self, session_id: str, tool_call_id: str, body: str, *, inbox_id: int) -> int | None:
        row_id = await self._write("remind", {"session_id": session_id, "tool_call_id": tool_call_id, "body": body,
                                              "inbox_id": inbox_id, "now": time.time()})
        return None if row_id is None else int(row_id)

    # -- sign-offs -----------------------------------------------------------------------------
    async def decide_signoff(
        self, signoff_id: str, status: str, by: str, *, reason: str | None = None, inbox_id: int | None = None,
        outbox: Sequence[tuple[str, str]] = (),
    ) -> list[int] | None:
        ids = await self._write("decide_signoff", {
            "signoff_id": signoff_id, "status": status, "by": by, "reason": reason, "inbox_id": inbox_id,
            "outbox": [list(o) for o in outbox], "now": time.time()})
        return None if ids is None else _ids(ids)

    async def signoff_reminded(
        self, signoff_id: str, *, inbox_id: int | None, outbox: Sequence[tuple[str, str]] = ()
    ) -> list[int] | None:
        ids = await self._write("signoff_reminded", {"signoff_id": signoff_id, "inbox_id": inbox_id,
                                                     "outbox": [list(o) for o in outbox], "now": time.time()})
        return None if ids is None else _ids(ids)

    async def add_approver(self, platform: str, channel_id: str, user_id: str, added_by: str) -> None:
        await self._write("add_approver", {"platform": platform, "channel_id": channel_id, "user_id": user_id,
                                           "added_by": added_by, "now": time.time()})

    # -- suggestions (bot.chat.suggestions) and the ratings of plans -------------------------------
    async def add_suggestion(self, suggestion: SuggestionRow, *, inbox_id: int,
                             outbox: Sequence[tuple[str, str]] = ()) -> list[int]:
        return _ids(await self._write("add_suggestion", {"suggestion": suggestion, "inbox_id": inbox_id,
                                                         "outbox": [list(o) for o in outbox], "now": time.time()}))

    async def decide_suggestion(
        self, suggestion_id: str, status: str, by: str, *, inbox_id: int | None,
        adopted: ChatEvent | None = None, outbox: Sequence[tuple[str, str]] = (),
    ) -> list[int] | None:
        ids = await self._write("decide_suggestion", {
            "suggestion_id": suggestion_id, "status": status, "by": by, "inbox_id": inbox_id, "adopted": adopted,
            "outbox": [list(o) for o in outbox], "now": time.time()})
        return None if ids is None else _ids(ids)

    async def record_feedback(self, chat_key: str, session_id: str, run_no: int, user_id: str, rating: str,
                              at: float) -> bool:
        return bool(await self._write("record_feedback", {"chat_key": chat_key, "session_id": session_id,
                                                          "run_no": run_no, "user_id": user_id, "rating": rating,
                                                          "at": at}))

    # -- the outbox ----------------------------------------------------------------------------
    async def queue_outbox(self, chat_key: str, session_id: str, kind: str, body: str) -> int:
        return int(await self._write("queue_outbox", {"chat_key": chat_key, "session_id": session_id, "kind": kind,
                                                      "body": body, "now": time.time()}))

    async def outbox_part_sent(self, outbox_id: int, parts_sent: int, message_id: str) -> None:
        await self._write("outbox_part_sent", {"outbox_id": outbox_id, "parts_sent": parts_sent,
                                               "message_id": message_id})

    async def record_watermark(self, outbox_id: int) -> int | None:
        # before a question's first posting attempt; a re-post (a retry, a restart) gets the first
        # one back, never a later one: an answer given in between still binds
        found = await self._write("record_watermark", {"outbox_id": outbox_id})
        return None if found is None else int(found)

    async def outbox_sent(self, outbox_id: int, parts_sent: int, message_id: str | None,
                          posted_after: int | None = None) -> None:
        await self._write("outbox_sent", {"outbox_id": outbox_id, "parts_sent": parts_sent,
                                          "message_id": message_id, "posted_after": posted_after})

    async def outbox_attempt_failed(self, outbox_id: int, error: str) -> None:
        await self._write("outbox_attempt_failed", {"outbox_id": outbox_id, "error": error[:ERROR_CHARS]})

    async def outbox_failed(self, outbox_id: int, error: str) -> None:
        # a question nobody can see: its chat's task decides what that means for the run (an
        # event in the same transaction, told once). The row's chat, session and question never
        # change once queued, so they are read before the write.
        error = error[:ERROR_CHARS]
        row = await self._row("SELECT chat_key, session_id, tool_call_id FROM outbox WHERE id = $1 "
                              "AND kind = 'question'", outbox_id)
        event = None if row is None else ChatEvent(
            row[0], "undeliverable", json.dumps({"session_id": row[1], "tool_call_id": row[2], "error": error},
                                                ensure_ascii=False), f"undeliverable:{outbox_id}")
        await self._write("outbox_failed", {"outbox_id": outbox_id, "error": error, "event": event,
                                            "now": time.time()})

    async def retry_outbox(self, outbox_id: int) -> str | None:
        # the operator's hand, not a chat's task: it carries no lease (any process may queue it)
        chat_key = await self._write("retry_outbox", {"outbox_id": outbox_id}, fenced=False)
        return None if chat_key is None else str(chat_key)


def _bodies(messages: Sequence[Message]) -> list[str]:
    return [message_body(m) for m in messages]
