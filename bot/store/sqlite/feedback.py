"""The ratings of plans (👍 / 👎) on SQLite: the write runs on the store's writer thread."""

from __future__ import annotations

import sqlite3

FEEDBACK_COLS = "f.session_id, f.run_no, r.chat_key, f.user_id, f.rating, f.at"
RECENT = (f"SELECT {FEEDBACK_COLS} FROM run_feedback f JOIN runs r ON r.session_id = f.session_id "
          "AND r.run_no = f.run_no ORDER BY f.at DESC LIMIT ?")


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
