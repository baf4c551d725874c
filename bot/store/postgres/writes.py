"""How a write of bot.store.writes reaches PostgreSQL: one statement calling its server function.

    SELECT bot_<name>($1::jsonb)        -- migrations/postgres/0011_one_record_writes.sql

The argument is the write's record as JSON (`record_json`): rows as their column values
(bot.store.rows.stored), messages as their stored text, and `fence`, the writer's lease (null
for an unfenced write). The function checks the fence and writes in the statement's own
transaction, so a write is one round trip, and asyncpg returns once it has committed. It answers
jsonb, decoded here (an id, a list of ids, a session row as an object, true or false, or null).
A lost lease comes back as SQLSTATE LEASE_LOST, which the store turns into LeaseLost.

Adding a write: its record in bot.store.writes, its function in bot/store/sqlite/ for SQLite
and in a new migration here (CREATE OR REPLACE for a changed one).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, TypeAlias

import asyncpg
from pydantic import BaseModel

from bot.store.postgres.leases import Lease, lost
from bot.store.rows import message_body, stored

Conn: TypeAlias = asyncpg.Connection
LEASE_LOST = "BL001"  # raised by bot_check_fence (migrations/postgres/0011)


def _encode(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return stored(value)
    if isinstance(value, BaseModel):  # a message of a record (TurnStart's): its stored text
        return message_body(value)  # type: ignore[arg-type]
    raise TypeError(f"a write's record cannot hold {type(value).__name__}")


def record_json(record: dict[str, Any], lease: Lease | None) -> str:
    fence = None if lease is None else {"chat_key": lease.chat_key, "owner": lease.owner, "fence": lease.fence}
    return json.dumps({**record, "fence": fence}, default=_encode, ensure_ascii=False)


async def call(conn: Conn, name: str, record: str, lease: Lease | None = None) -> Any:
    """Run the write `bot_<name>` with `record` (record_json, carrying `lease`); its answer,
    decoded. LeaseLost, nothing written, once a newer lease of the chat exists."""
    try:
        answer = await conn.fetchval(f"SELECT bot_{name}($1::jsonb)", record)
    except asyncpg.PostgresError as exc:
        if lease is None or getattr(exc, "sqlstate", None) != LEASE_LOST:
            raise
        # the statement's transaction was rolled back with the error: describe the lease row now
        raise await lost(conn, lease) from None
    return None if answer is None else json.loads(answer)


async def warm(conn: Conn) -> None:
    """A new pooled connection meets the steps' functions here, not in a chat's step: the first
    call of a PL/pgSQL function on a connection compiles it and plans each statement it runs
    (1-4 ms of the server's CPU, against 0.3 ms a call after), and asyncpg prepares each
    statement on a connection once. Each call writes nothing (no session has the empty id), and
    the transaction is rolled back anyway."""
    nobody: dict[str, Any] = {"session_id": "", "messages": [], "inbox_done": [], "usage": None, "now": 0.0, "step": 0}
    tr = conn.transaction()
    await tr.start()
    try:
        await call(conn, "append_step", record_json(nobody, None))
        await call(conn, "pause", record_json({**nobody, "questions": [], "postings": []}, None))
        await call(conn, "finish_run", record_json({**nobody, "outbox": [], "signoff": None}, None))
        await call(conn, "resolve_question", record_json(
            {"session_id": "", "tool_call_id": "", "message": "", "status": "answered", "inbox_id": None,
             "now": 0.0}, None))
        await call(conn, "record_watermark", record_json({"outbox_id": 0}, None))
        await call(conn, "outbox_sent", record_json(
            {"outbox_id": 0, "parts_sent": 0, "message_id": None, "posted_after": None}, None))
    finally:
        await tr.rollback()
