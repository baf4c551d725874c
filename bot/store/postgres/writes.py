"""The store's writes as async functions of an asyncpg connection: the twins of bot.store.sqlite.writes.

Same function names, same order, same arguments (less the sqlite3 connection), same SQL up to
the dialect, so a write added to writes.py ports by copying its function here and changing:

- placeholders: `?` -> `$1, $2, ...` (asyncpg takes the arguments positionally, unpacked);
- `cur.lastrowid` / `cur.rowcount` -> `RETURNING id` with fetchval, or the status string that
  `execute` returns (`"UPDATE 1"`, see `_count`);
- `INSERT OR REPLACE` -> `INSERT ... ON CONFLICT (key) DO UPDATE SET ...`;
- many rows: `executemany` -> one statement over `unnest($n::text[])` (an UPDATE by ids:
  `id = ANY($n::text[]::bigint[])`: numbers go as text[], pg_connect.text_array).

Every statement is a round trip to the server, so the writes of every step (start_turn,
append_step, pause, finish_run, resolve_question, add_usage, outbox_sent) are not here: they are
server functions (migrations/postgres/0008_write_functions.sql) called in one statement each by
bot.store.postgres.calls. Of the ones here, a write that updates the session row anyway does that
first (its UPDATE is the lock `append` would take, and RETURNING gives what it would read back),
and add_inbox is one statement (PostgresStore runs it without BEGIN and COMMIT).

Each runs inside a transaction that PostgresStore.write opens (and, for a chat's writes under a
lease, after the fence check of bot.store.postgres.leases), so a function either completes or leaves
no trace. Unlike SQLite's single writer, writes from different connections (and processes) run
at the same time: a write that reads then writes a row it depends on locks it first (`append`
locks the session row so message sequence numbers cannot collide).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from typing import Any, TypeAlias

import asyncpg

from bot.store.base import ChatEvent
from bot.store.postgres.connect import text_array
from bot.store.sqlite.writes import OPEN_SIGNOFF

Conn: TypeAlias = asyncpg.Connection
Row = tuple[Any, ...]
INBOX_CHANNEL = "bot_inbox"  # add_inbox and add_events NOTIFY the chat key here at commit (bot.store.postgres.notify)


def _count(status: str) -> int:
    """Rows touched, from asyncpg's command status ("UPDATE 3", "INSERT 0 1")."""
    tail = status.rsplit(" ", 1)[-1]
    return int(tail) if tail.isdigit() else 0


async def append(conn: Conn, session_id: str, bodies: Sequence[str], *, locked: bool = False) -> None:
    """`locked`: this transaction already updated the session row, which holds its lock."""
    if bodies:  # each row takes the next sequence number of its session
        # The session row's lock orders concurrent appends to one session (SQLite's single
        # writer does that by itself); a session without a row (never in practice) is not locked.
        # A write that updates the session row anyway does that first, and its UPDATE is the lock
        # (a round trip fewer on every step).
        if not locked:
            await conn.execute("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", session_id)
        await conn.execute(
            "INSERT INTO messages (session_id, seq, body) "
            "SELECT $1, base.n + u.ord, u.body FROM unnest($2::text[]) WITH ORDINALITY AS u(body, ord), "
            "(SELECT COALESCE(MAX(seq), 0) AS n FROM messages WHERE session_id = $1) AS base",
            session_id, list(bodies),
        )


_ADD_INBOX = ("WITH stored AS (INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at) "
              "VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT DO NOTHING RETURNING id) ")


async def add_inbox(conn: Conn, platform: str, dedup_id: str, chat_key: str, body: str,
                    received_at: float | None = None, *, notify: bool = True) -> int | None:
    # One statement (PostgresStore runs it without BEGIN and COMMIT): a stored row wakes the
    # chat's owner, in whichever process (the NOTIFY is sent at commit); a duplicate, none.
    # `notify=False` when the storing process runs the chat itself: a NOTIFY is not free, since
    # PostgreSQL lets one notifying transaction at a time commit (a lock held through the
    # commit's flush, across all databases), and under load the others queue behind it.
    at = time.time() if received_at is None else received_at
    if not notify:
        return await conn.fetchval(_ADD_INBOX + "SELECT id FROM stored", platform, dedup_id, chat_key, body, at)
    inbox_id: int | None = await conn.fetchval(_ADD_INBOX + "SELECT id, pg_notify($6, $3) FROM stored",
                                               platform, dedup_id, chat_key, body, at, INBOX_CHANNEL)
    return inbox_id


async def add_events(conn: Conn, events: Sequence[ChatEvent]) -> None:
    # Events are written by whichever process noticed them (deadline watcher, recovery, delivery
    # worker), so, like add_inbox, each chat that got a new row wakes its owner wherever it runs.
    woken = await conn.fetch(
        "INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at, kind) "
        "SELECT 'internal', e.dedup_id, e.chat_key, e.body, 'pending', $5, e.kind "
        "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY "
        "AS e(dedup_id, chat_key, body, kind, ord) ORDER BY e.ord "
        "ON CONFLICT DO NOTHING RETURNING chat_key",
        [e.dedup_id for e in events], [e.chat_key for e in events], [e.body for e in events],
        [e.kind for e in events], time.time(),
    )
    for chat_key in sorted({r[0] for r in woken}):
        await conn.execute("SELECT pg_notify($1, $2)", INBOX_CHANNEL, chat_key)


async def close_inbox(conn: Conn, inbox_ids: Sequence[int]) -> None:
    if inbox_ids:
        await conn.execute("UPDATE inbox SET status = 'done' WHERE id = ANY($1::text[]::bigint[])",
                           text_array(inbox_ids))


async def fail_inbox(conn: Conn, inbox_id: int, error: str) -> None:
    await conn.execute("UPDATE inbox SET status = 'failed', error = $1 WHERE id = $2", error[:500], inbox_id)


async def finish_inbox(conn: Conn, inbox_id: int, drop_earlier: bool) -> None:
    if drop_earlier:  # /cancel and /new also discard the messages sent before them
        await conn.execute(
            "UPDATE inbox SET status = 'done' WHERE status = 'pending' AND kind = 'message' AND id < $1 "
            "AND chat_key = (SELECT chat_key FROM inbox WHERE id = $1)",
            inbox_id,
        )
    await conn.execute("UPDATE inbox SET status = 'done' WHERE id = $1", inbox_id)


async def remember_location(conn: Conn, chat_key: str, location: str, lang: str) -> None:
    now = time.time()
    status = await conn.execute(
        "UPDATE sessions SET location = $1, updated_at = $2 WHERE chat_key = $3 AND closed = 0", location, now, chat_key
    )
    if _count(status) == 0:
        await conn.execute(
            "INSERT INTO sessions (id, chat_key, state, lang, location, created_at, updated_at) "
            "VALUES ($1, $2, 'idle', $3, $4, $5, $6)",
            uuid.uuid4().hex, chat_key, lang, location, now, now,
        )






async def interrupt(conn: Conn, session_id: str, bodies: Sequence[str], close: bool, notice: str | None) -> None:
    await append(conn, session_id, bodies)
    await conn.execute("UPDATE questions SET status = 'cancelled' WHERE session_id = $1 AND status = 'waiting'", session_id)
    await conn.execute(f"UPDATE signoffs SET status = 'cancelled' WHERE session_id = $1 AND {OPEN_SIGNOFF}", session_id)
    await conn.execute(
        "UPDATE sessions SET state = 'idle', closed = $1, updated_at = $2 WHERE id = $3",
        1 if close else 0, time.time(), session_id,
    )
    if notice is not None:
        chat_key = await conn.fetchval("SELECT chat_key FROM sessions WHERE id = $1", session_id)
        await queue_outbox(conn, chat_key, session_id, "notice", notice)


async def close_session(conn: Conn, chat_key: str) -> None:
    await conn.execute("UPDATE sessions SET closed = 1, state = 'idle' WHERE chat_key = $1 AND closed = 0", chat_key)




# -- sign-offs -------------------------------------------------------------------------------
async def decide_signoff(
    conn: Conn, signoff_id: str, status: str, by: str, reason: str | None, inbox_id: int | None,
    outbox: Sequence[tuple[str, str]],
) -> list[int] | None:
    now = time.time()
    row = await conn.fetchrow(
        f"UPDATE signoffs SET status = $1, decided_by = $2, decided_at = $3, reason = COALESCE($4, reason) "
        f"WHERE id = $5 AND {OPEN_SIGNOFF} RETURNING session_id, chat_key",
        status, by, now, reason, signoff_id,
    )
    if row is None:
        return None
    session_id, chat_key = row
    if status in ("approved", "expired"):
        await conn.execute("UPDATE sessions SET state = 'idle', updated_at = $1 WHERE id = $2 AND state = 'signoff'",
                           now, session_id)
    if inbox_id is not None:
        await conn.execute("UPDATE inbox SET status = 'done' WHERE id = $1", inbox_id)
    return [await queue_outbox(conn, chat_key, session_id, kind, body) for kind, body in outbox]


async def signoff_reminded(
    conn: Conn, signoff_id: str, inbox_id: int | None, outbox: Sequence[tuple[str, str]]
) -> list[int] | None:
    row = await conn.fetchrow(
        f"UPDATE signoffs SET reminded = 1 WHERE id = $1 AND reminded = 0 AND {OPEN_SIGNOFF} "
        "RETURNING session_id, chat_key",
        signoff_id,
    )
    if inbox_id is not None:
        await conn.execute("UPDATE inbox SET status = 'done' WHERE id = $1", inbox_id)
    if row is None:
        return None
    return [await queue_outbox(conn, row[1], row[0], kind, body) for kind, body in outbox]


async def add_approver(conn: Conn, platform: str, channel_id: str, user_id: str, added_by: str) -> None:
    await conn.execute(
        "INSERT INTO channel_approvers (platform, channel_id, user_id, added_by, added_at) VALUES ($1, $2, $3, $4, $5) "
        "ON CONFLICT DO NOTHING",
        platform, channel_id, user_id, added_by, time.time(),
    )


# -- the outbox ------------------------------------------------------------------------------
async def remind(conn: Conn, session_id: str, tool_call_id: str, body: str, inbox_id: int) -> int | None:
    updated = await conn.execute(
        "UPDATE questions SET remind_at = NULL WHERE session_id = $1 AND tool_call_id = $2 AND status = 'waiting' "
        "AND remind_at IS NOT NULL",
        session_id, tool_call_id,
    )
    await conn.execute("UPDATE inbox SET status = 'done' WHERE id = $1", inbox_id)
    if _count(updated) != 1:
        return None
    chat_key: str = await conn.fetchval("SELECT chat_key FROM sessions WHERE id = $1", session_id)
    return await queue_outbox(conn, chat_key, session_id, "reminder", body, tool_call_id=tool_call_id)


async def queue_outbox(
    conn: Conn, chat_key: str, session_id: str, kind: str, body: str, tool_call_id: str | None = None
) -> int:
    outbox_id: int = await conn.fetchval(
        "INSERT INTO outbox (session_id, chat_key, kind, body, status, created_at, tool_call_id) "
        "VALUES ($1, $2, $3, $4, 'pending', $5, $6) RETURNING id",
        session_id, chat_key, kind, body, time.time(), tool_call_id,
    )
    return outbox_id


async def notice_inbox(conn: Conn, inbox_id: int, chat_key: str, session_id: str, body: str) -> int:
    await conn.execute("UPDATE inbox SET noticed = 1 WHERE id = $1", inbox_id)
    return await queue_outbox(conn, chat_key, session_id, "notice", body)


async def outbox_part_sent(conn: Conn, outbox_id: int, parts_sent: int, message_id: str) -> None:
    await conn.execute("UPDATE outbox SET parts_sent = $1, message_id = $2 WHERE id = $3", parts_sent, message_id, outbox_id)



async def retry_outbox(conn: Conn, outbox_id: int) -> str | None:
    chat_key: str | None = await conn.fetchval(
        "UPDATE outbox SET status = 'pending', attempts = 0 WHERE id = $1 AND status = 'failed' AND kind <> 'question' "
        "RETURNING chat_key",
        outbox_id,
    )
    return chat_key


async def outbox_attempt_failed(conn: Conn, outbox_id: int, error: str) -> None:
    await conn.execute("UPDATE outbox SET attempts = attempts + 1, error = $1 WHERE id = $2", error[:500], outbox_id)


async def outbox_failed(conn: Conn, outbox_id: int, error: str) -> None:
    await conn.execute(
        "UPDATE outbox SET status = 'failed', attempts = attempts + 1, error = $1 WHERE id = $2", error[:500], outbox_id
    )
    row = await conn.fetchrow(
        "SELECT chat_key, session_id, tool_call_id FROM outbox WHERE id = $1 AND kind = 'question'", outbox_id
    )
    if row is not None:  # the chat's task decides what a question nobody can see means for the run
        body = json.dumps({"session_id": row[1], "tool_call_id": row[2], "error": error[:500]}, ensure_ascii=False)
        await add_events(conn, [ChatEvent(row[0], "undeliverable", body, f"undeliverable:{outbox_id}")])
