"""SQLite's writes of suggestions (bot.chat.suggestions) and of the ratings of plans: plain
functions of a sqlite3 connection taking their write's record (bot.store.writes), run by the
writer thread like bot.store.sqlite.writes. PostgreSQL's twins are in migrations/postgres/0014."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from bot.store.rows import ChatEvent, SuggestionRow
from bot.store.sqlite.writes import add_events, insert, queue_outbox


def add_suggestion(conn: sqlite3.Connection, suggestion: SuggestionRow, inbox_id: int,
                   outbox: Sequence[Sequence[str]], now: float) -> list[int]:
    s = suggestion
    insert(conn, "suggestions", s)
    conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    return [queue_outbox(conn, s.chat_key, s.session_id, kind, body, now) for kind, body in outbox]


def decide_suggestion(conn: sqlite3.Connection, suggestion_id: str, status: str, by: str, inbox_id: int | None,
                      adopted: ChatEvent | None, outbox: Sequence[Sequence[str]], now: float) -> list[int] | None:
    cur = conn.execute("UPDATE suggestions SET status = ?, decided_by = ?, decided_at = ? "
                       "WHERE id = ? AND status = 'waiting'", (status, by, now, suggestion_id))
    if inbox_id is not None:
        conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    if cur.rowcount != 1:
        return None
    session_id, chat_key = conn.execute("SELECT session_id, chat_key FROM suggestions WHERE id = ?",
                                        (suggestion_id,)).fetchone()
    if adopted is not None:
        add_events(conn, [adopted], now)
    return [queue_outbox(conn, chat_key, session_id, kind, body, now) for kind, body in outbox]


def record_feedback(conn: sqlite3.Connection, chat_key: str, session_id: str, run_no: int, user_id: str,
                    rating: str, at: float) -> bool:
    """Only a run of this chat on record takes a rating; a person's later press replaces theirs."""
    cur = conn.execute(
        "INSERT INTO run_feedback (session_id, run_no, user_id, rating, at) "
        "SELECT session_id, run_no, ?, ?, ? FROM runs WHERE session_id = ? AND run_no = ? AND chat_key = ? "
        "ON CONFLICT (session_id, run_no, user_id) DO UPDATE SET rating = excluded.rating, at = excluded.at",
        (user_id, rating, at, session_id, run_no, chat_key),
    )
    return cur.rowcount > 0


WRITES = (add_suggestion, decide_suggestion, record_feedback)
