"""The ratings of plans (👍 / 👎) on PostgreSQL: the twins of bot.store.sqlite.feedback."""

from __future__ import annotations

import asyncpg

FEEDBACK_COLS = "f.session_id, f.run_no, r.chat_key, f.user_id, f.rating, f.at"
RECENT = (f"SELECT {FEEDBACK_COLS} FROM run_feedback f JOIN runs r ON r.session_id = f.session_id "
          "AND r.run_no = f.run_no ORDER BY f.at DESC LIMIT $1")


async def record_feedback(conn: asyncpg.Connection, chat_key: str, session_id: str, run_no: int, user_id: str,
                          rating: str, at: float) -> bool:
    """Only a run of this chat on record takes a rating; a person's later press replaces theirs."""
    status = await conn.execute(
        "INSERT INTO run_feedback (session_id, run_no, user_id, rating, at) "
        "SELECT session_id, run_no, $1, $2, $3 FROM runs WHERE session_id = $4 AND run_no = $5 AND chat_key = $6 "
        "ON CONFLICT (session_id, run_no, user_id) DO UPDATE SET rating = excluded.rating, at = excluded.at",
        user_id, rating, at, session_id, run_no, chat_key,
    )
    return str(status).rsplit(" ", 1)[-1] != "0"  # "INSERT 0 1": one row written
