"""The suggestions' writes and reads on SQLite (see bot.chat.suggestions): plain functions of a
sqlite3 connection, run by the writer thread like bot.store.sqlite.writes."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from bot.store.base import ChatEvent, SuggestionRow
from bot.store.sqlite.writes import add_events, queue_outbox

SUGGESTION_COLS = "id, session_id, chat_key, status, body, sender_id, asked_of, created_at, decided_by, decided_at"


def add_suggestion(conn: sqlite3.Connection, suggestion: SuggestionRow, inbox_id: int,
                   outbox: Sequence[tuple[str, str]]) -> list[int]:
    s = suggestion
    conn.execute(f"INSERT INTO suggestions ({SUGGESTION_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (s.id, s.session_id, s.chat_key, s.status, s.body, s.sender_id, s.asked_of, s.created_at,
                  s.decided_by, s.decided_at))
    conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    return [queue_outbox(conn, s.chat_key, s.session_id, kind, body) for kind, body in outbox]


def decide_suggestion(conn: sqlite3.Connection, suggestion_id: str, status: str, by: str, inbox_id: int | None,
                      adopted: ChatEvent | None, outbox: Sequence[tuple[str, str]]) -> list[int] | None:
    cur = conn.execute("UPDATE suggestions SET status = ?, decided_by = ?, decided_at = ? "
                       "WHERE id = ? AND status = 'waiting'", (status, by, time.time(), suggestion_id))
    if inbox_id is not None:
        conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    if cur.rowcount != 1:
        return None
    session_id, chat_key = conn.execute("SELECT session_id, chat_key FROM suggestions WHERE id = ?",
                                        (suggestion_id,)).fetchone()
    if adopted is not None:
        add_events(conn, [adopted])
    return [queue_outbox(conn, chat_key, session_id, kind, body) for kind, body in outbox]


def suggestion(row: Sequence[object]) -> SuggestionRow:
    return SuggestionRow(*row)  # type: ignore[arg-type]
