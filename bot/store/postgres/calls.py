"""The hot writes in one round trip each: calls of the server functions of
migrations/postgres/0008_write_functions.sql.

A chat's step is mostly round trips to the server (issue 18), and a client-side transaction
costs BEGIN with the fence check, each statement, and COMMIT. These writes run on every step of
every conversation, so each is one statement calling a function that checks the writer's lease
and does the whole write in the statement's own transaction; asyncpg returns once that
transaction has committed. The rest of the writes stay in bot.store.postgres.writes (rarer: commands,
sign-offs, reminders, failures), run by PostgresStore.write as before.

Each function here takes the connection and the writer's lease (None: unfenced) and returns what
its twin in bot.store.sqlite.writes returns. A lost lease comes back as SQLSTATE LEASE_LOST, which
PostgresStore.call turns into LeaseLost. Arrays of numbers go as text[], cast in the statement
(`_params`, pg_connect.text_array), and the outbox ids come back as text[] too. Porting a write
here: its function in a new migration (CREATE OR REPLACE for a changed one), its call here, and
the store's method through `call`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any, TypeAlias

import asyncpg

from bot.store.base import RunUsage, TurnStart
from bot.store.postgres.connect import text_array
from bot.store.postgres.leases import Lease
from bot.store.sqlite.writes import SESSION_COLS

Conn: TypeAlias = asyncpg.Connection
Row = tuple[Any, ...]
LEASE_LOST = "BL001"  # raised by bot_check_fence (migration 0008)


def _params(n: int, casts: dict[int, str] | None = None) -> str:
    """`$1, ..., $n`; `casts`: parameter -> the array type it is sent as text[] for."""
    casts = casts or {}
    return ", ".join(f"${i}::text[]::{casts[i]}" if i in casts else f"${i}" for i in range(1, n + 1))


def _ids(texts: Sequence[str]) -> list[int]:
    return [int(t) for t in texts]


_APPEND_STEP = f"SELECT bot_append_step({_params(7, {7: 'bigint[]'})})"
_PAUSE = f"SELECT bot_pause({_params(25, {7: 'bigint[]', 12: 'float8[]', 13: 'float8[]', 14: 'float8[]'})})::text[]"
_FINISH_RUN = f"SELECT bot_finish_run({_params(30, {6: 'bigint[]'})})::text[]"
_ADD_USAGE = f"SELECT bot_add_usage({_params(13)})"


def fence_args(lease: Lease | None) -> tuple[str | None, str | None, int | None]:
    """The three leading arguments of every function: the lease the write must hold."""
    return (None, None, None) if lease is None else (lease.chat_key, lease.owner, lease.fence)


def usage_args(usage: RunUsage | None) -> tuple[Any, ...]:
    """The nine arguments of a segment's usage (bot_usage), all None for none."""
    if usage is None:
        return (None,) * 9
    u = usage
    return (u.session_id, u.run_no, u.model, u.steps, u.prompt_tokens, u.completion_tokens, u.llm_calls, u.cost_usd,
            u.outcome)


async def start_turn(conn: Conn, lease: Lease | None, turn: TurnStart, body: str) -> Row:
    row = await conn.fetchrow(
        f"SELECT {SESSION_COLS} FROM bot_start_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, "
        "$15, $16)",
        *fence_args(lease), turn.chat_key, turn.new_session_id or uuid.uuid4().hex, turn.lang, turn.asker_id,
        turn.asker_name, turn.request, turn.location, turn.trace_parent, body, turn.inbox_id, turn.rejected_by,
        turn.reason, time.time(),
    )
    assert row is not None
    return tuple(row)


async def append_step(conn: Conn, lease: Lease | None, session_id: str, bodies: Sequence[str], step: int,
                      inbox_done: Sequence[int]) -> None:
    await conn.execute(_APPEND_STEP, *fence_args(lease), session_id, list(bodies), step, text_array(inbox_done))


async def pause(conn: Conn, lease: Lease | None, session_id: str, bodies: Sequence[str], questions: Sequence[Row],
                step: int, inbox_done: Sequence[int], usage: RunUsage | None = None) -> list[int]:
    """`questions`: rows of (session_id, tool_call_id, question, options JSON, asker_id, asked_at,
    deadline, remind_at, addressee), as PostgresStore.pause builds them; one outbox id each."""
    columns = [[q[i] for q in questions] for i in range(1, 9)]
    for i in (4, 5, 6):  # asked_at, deadline, remind_at
        columns[i] = text_array(columns[i])
    ids = await conn.fetchval(
        _PAUSE, *fence_args(lease), session_id, list(bodies), step, text_array(inbox_done), *columns, *usage_args(usage),
        time.time(),
    )
    return _ids(ids)


async def finish_run(conn: Conn, lease: Lease | None, session_id: str, bodies: Sequence[str],
                     outbox: Sequence[tuple[str, str]], inbox_done: Sequence[int],
                     signoff: Row | None = None, usage: RunUsage | None = None) -> list[int]:
    ids = await conn.fetchval(
        _FINISH_RUN,
        *fence_args(lease), session_id, list(bodies), text_array(inbox_done), [k for k, _ in outbox],
        [b for _, b in outbox], *(signoff if signoff is not None else (None,) * 12), *usage_args(usage), time.time(),
    )
    return _ids(ids)


async def resolve_question(conn: Conn, lease: Lease | None, session_id: str, tool_call_id: str, body: str,
                           status: str, inbox_id: int | None) -> bool:
    resolved: bool = await conn.fetchval(
        "SELECT bot_resolve_question($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        *fence_args(lease), session_id, tool_call_id, body, status, inbox_id, time.time(),
    )
    return resolved


async def add_usage(conn: Conn, lease: Lease | None, usage: RunUsage) -> None:
    await conn.execute(_ADD_USAGE, *fence_args(lease), *usage_args(usage), time.time())


async def outbox_sent(conn: Conn, lease: Lease | None, outbox_id: int, parts_sent: int, message_id: str | None,
                      posted_after: int | None = None) -> None:
    await conn.execute("SELECT bot_outbox_sent($1, $2, $3, $4, $5, $6, $7)",
                       *fence_args(lease), outbox_id, parts_sent, message_id, posted_after)


async def warm(conn: Conn) -> None:
    """A new pooled connection meets the steps' functions here, not in a chat's step: the first
    call of a PL/pgSQL function on a connection compiles it and plans each statement it runs
    (1-4 ms of the server's CPU, against 0.3 ms a call after), and asyncpg prepares each
    statement on a connection once. Each call writes nothing (no session has the empty id),
    and the transaction is rolled back anyway."""
    tr = conn.transaction()
    await tr.start()
    try:
        await append_step(conn, None, "", [], 0, [])
        await pause(conn, None, "", [], [], 0, [])
        await finish_run(conn, None, "", [], [], [])
        await resolve_question(conn, None, "", "", "", "answered", None)
        await outbox_sent(conn, None, 0, 0, None)
    finally:
        await tr.rollback()
