"""The suggestions' writes on PostgreSQL: the twins of bot.store.sqlite.suggestions (same names,
same arguments less the connection, same SQL up to the dialect)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from bot.store.base import ChatEvent, SuggestionRow
from bot.store.postgres.writes import Conn, add_events, queue_outbox
from bot.store.sqlite.suggestions import SUGGESTION_COLS


async def add_suggestion(conn: Conn, suggestion: SuggestionRow, inbox_id: int,
                         outbox: Sequence[tuple[str, str]]) -> list[int]:
    s = suggestion
    await conn.execute(f"INSERT INTO suggestions ({SUGGESTION_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                       s.id, s.session_id, s.chat_key, s.status, s.body, s.sender_id, s.asked_of, s.created_at,
                       s.decided_by, s.decided_at)
    await conn.execute("UPDATE inbox SET status = 'done' WHERE id = $1", inbox_id)
    return [await queue_outbox(conn, s.chat_key, s.session_id, kind, body) for kind, body in outbox]


async def decide_suggestion(conn: Conn, suggestion_id: str, status: str, by: str, inbox_id: int | None,
                            adopted: ChatEvent | None, outbox: Sequence[tuple[str, str]]) -> list[int] | None:
    row = await conn.fetchrow("UPDATE suggestions SET status = $1, decided_by = $2, decided_at = $3 "
                              "WHERE id = $4 AND status = 'waiting' RETURNING session_id, chat_key",
                              status, by, time.time(), suggestion_id)
    if inbox_id is not None:
        await conn.execute("UPDATE inbox SET status = 'done' WHERE id = $1", inbox_id)
    if row is None:
        return None
    session_id, chat_key = row
    if adopted is not None:
        await add_events(conn, [adopted])
    return [await queue_outbox(conn, chat_key, session_id, kind, body) for kind, body in outbox]

