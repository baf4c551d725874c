"""Chat leases with fencing (PostgreSQL): which process may change a chat, and proof of it.

A lease is a row of `chat_leases` (migrations/postgres/0002_chat_leases.sql): the chat, its
owner (a process id from `new_owner_id()`), an expiry taken from the database's `now()` (never
a process clock, so clock skew between machines does not matter), and a fencing number drawn
from one sequence each time a lease is granted: a new lease of a chat always carries a larger
number than every lease of that chat before it.

    lease = await acquire(conn, chat_key, owner, ttl_s)   # Lease, or None: someone holds it
    taken = await take(conn, chat_key, owner, ttl_s)      # the same, with the session left working
    lease = await renew(conn, lease, ttl_s)                # same fence, later expiry; LeaseLost
    await release(conn, lease)                             # chat goes quiet; False if already lost

    if await conn.execute(begin_fenced(lease)) != "SELECT 1":   # a fenced write: BEGIN and the
        await conn.execute("ROLLBACK")                     #   check; LeaseLost once a newer
        raise await lost(conn, lease)                      #   lease exists
    ...the write...; COMMIT                                # (in_fenced_transaction; PostgresStore.write)

Why the fence check is inside the write's transaction (Kleppmann, "How to do distributed
locking"): a holder may stall (GC, SIGSTOP, a frozen VM) for longer than its lease, and a check
made before the write cannot help, since the stall can fall between the check and the write.
The check locks the lease row FOR SHARE in the same transaction as the write, and a takeover
must lock that row to change it. So either the write commits before the takeover (and the new
owner, which reads after taking over, sees it), or the takeover commits first and the write
finds the newer fence and is refused. A holder stopped *inside* that transaction delays a
takeover only until the server ends its session (`idle_in_transaction_session_timeout`, see
bot.store.postgres.connect), then its transaction is rolled back.

A lease that expired but was not taken over still fences correctly: nobody else has written, so
its holder's writes and renewal succeed. Only a newer lease (or its own release) refuses them.

Granting is by expiry only: `acquire` takes a chat that has no lease row, a released lease or an
expired one, and returns None while another owner's lease is live, or while the caller's own
lease is live (the caller renews what it holds; a second acquire is a bug to surface, not to
paper over).
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import asyncpg

from bot.store.base import LeaseLost
from bot.store.postgres.connect import gone, text_array

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Lease:
    """A granted lease: `fence` is the number every write under it carries."""

    chat_key: str
    owner: str
    fence: int
    expires_at: float  # epoch seconds, by the database's clock


def new_owner_id() -> str:
    """A process's owner id: host, pid and a random part (a restarted process is a new owner)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class Taken:
    """A lease just granted, and what the chat's previous owner left, read once the lease was
    ours: the id of its open session if that was left working (a run the new owner re-drives,
    bot.sessions), and whether its outbox has rows to send."""

    lease: Lease
    working_session: str | None
    outbox_pending: bool


async def take(conn: asyncpg.Connection, chat_key: str, owner: str, ttl_s: float) -> Taken | None:
    """Take the chat's lease if it is free, released or expired, and look at its open session, in
    one round trip (bot_take_lease, migrations/postgres/0009); None while the lease is held live."""
    row = await conn.fetchrow(
        "SELECT r_fence, r_expires_at, r_working_session, r_outbox_pending FROM bot_take_lease($1, $2, $3)",
        chat_key, owner, float(ttl_s))
    return None if row is None else Taken(Lease(chat_key, owner, row[0], row[1]), row[2], row[3])


async def acquire(conn: asyncpg.Connection, chat_key: str, owner: str, ttl_s: float) -> Lease | None:
    """Take the chat's lease if it is free, released or expired; None while it is held live."""
    taken = await take(conn, chat_key, owner, ttl_s)
    return None if taken is None else taken.lease


async def renew(conn: asyncpg.Connection, lease: Lease, ttl_s: float) -> Lease:
    """Extend a held lease to now() + ttl_s (same fence); LeaseLost once a newer lease exists."""
    expires = await conn.fetchval(
        "UPDATE chat_leases SET expires_at = now() + make_interval(secs => $4) "
        "WHERE chat_key = $1 AND owner = $2 AND fence = $3 RETURNING extract(epoch FROM expires_at)::float8",
        lease.chat_key, lease.owner, lease.fence, float(ttl_s),
    )
    if expires is None:
        raise await lost(conn, lease)
    return Lease(lease.chat_key, lease.owner, lease.fence, expires)


async def release(conn: asyncpg.Connection, lease: Lease) -> bool:
    """Give the lease up (the chat went quiet); False when it was no longer ours. Never raises
    LeaseLost: releasing a lease somebody took over is harmless."""
    status = await conn.execute(
        "UPDATE chat_leases SET owner = NULL, expires_at = now() WHERE chat_key = $1 AND owner = $2 AND fence = $3",
        lease.chat_key, lease.owner, lease.fence,
    )
    return status.endswith(" 1")


def begin_fenced(lease: Lease) -> str:
    """`BEGIN` and the fence check as one simple query (one round trip: a chat's every step is a
    fenced write). The simple query protocol takes no parameters, so the lease's values are
    written in as literals (`literal`). It answers `SELECT 1` when `lease` is still the chat's
    newest lease, whose row is then locked FOR SHARE until the transaction ends; `SELECT 0`
    when it is not: roll back and raise `await lost(conn, lease)`."""
    return (f"BEGIN; SELECT 1 FROM chat_leases WHERE chat_key = {literal(lease.chat_key)} "
            f"AND owner = {literal(lease.owner)} AND fence = {int(lease.fence)} FOR SHARE")


async def in_fenced_transaction(conn: asyncpg.Connection, fn: Callable[[asyncpg.Connection], Awaitable[T]],
                                lease: Lease) -> T:
    """`fn(conn)` in a transaction that first checks `lease` (begin_fenced: the lease row stays
    locked FOR SHARE until COMMIT, so no takeover commits in between). BEGIN and the check
    travel as one simple query, so a fenced write costs one round trip more than its own
    statements and COMMIT, not two."""
    if await conn.execute(begin_fenced(lease)) != "SELECT 1":
        await conn.execute("ROLLBACK")
        raise await lost(conn, lease)
    try:
        result = await fn(conn)
    except BaseException:
        if not gone(conn):  # else the server has ended the transaction with the connection
            with contextlib.suppress(Exception):  # the pool rolls back what is still open on release
                await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")
    return result


def literal(text: str) -> str:
    """`text` as an SQL string literal. With standard_conforming_strings on (every connection
    sets it, see pg_connect.session_settings) a backslash is an ordinary character, so doubling
    the quotes is the whole escape; PostgreSQL text cannot hold NUL."""
    if "\x00" in text:
        raise ValueError("NUL in an SQL literal")
    return "'" + text.replace("'", "''") + "'"


async def current(conn: asyncpg.Connection, chat_key: str) -> Lease | None:
    """The chat's live lease, if any (expired or released: None)."""
    row = await conn.fetchrow(
        "SELECT owner, fence, extract(epoch FROM expires_at)::float8 FROM chat_leases "
        "WHERE chat_key = $1 AND owner IS NOT NULL AND expires_at > now()",
        chat_key,
    )
    return None if row is None else Lease(chat_key, row[0], row[1], row[2])


async def unowned_chats_with_inbox(conn: asyncpg.Connection, limit: int = 100) -> list[str]:
    """Chats with pending inbox rows and no live lease: the safety-net sweep takes these (a
    NOTIFY can be missed; the inbox table is the truth)."""
    rows = await conn.fetch(
        "SELECT DISTINCT i.chat_key FROM inbox i LEFT JOIN chat_leases l ON l.chat_key = i.chat_key "
        "WHERE i.status = 'pending' AND (l.chat_key IS NULL OR l.owner IS NULL OR l.expires_at <= now()) "
        "LIMIT $1",
        limit,
    )
    return [r[0] for r in rows]


async def renew_many(conn: asyncpg.Connection, leases: Sequence[Lease], ttl_s: float) -> dict[str, Lease]:
    """Extend every lease of `leases` that is still the chat's newest, in one statement (a
    process renews all it holds every few seconds); the chats missing from the result are lost."""
    if not leases:
        return {}
    rows = await conn.fetch(
        "UPDATE chat_leases l SET expires_at = now() + make_interval(secs => $4) "
        "FROM unnest($2::text[], $3::text[]::bigint[]) AS h(chat_key, fence) "
        "WHERE l.chat_key = h.chat_key AND l.fence = h.fence AND l.owner = $1 "
        "RETURNING l.chat_key, l.fence, extract(epoch FROM l.expires_at)::float8",
        leases[0].owner, [x.chat_key for x in leases], text_array([x.fence for x in leases]), float(ttl_s),
    )
    return {r[0]: Lease(r[0], leases[0].owner, r[1], r[2]) for r in rows}


async def unowned_chats_with_work(conn: asyncpg.Connection, limit: int = 500) -> list[str]:
    """Chats with something to do — inbox rows, outbox rows, a run that was working — and no
    live lease: the sweep takes these when their owner died (its NOTIFY was missed or sent to
    nobody). A chat that only waits for its person's answer has no work, nor do the messages set
    aside for that question (noticed: they wait for the answer, which wakes the chat)."""
    rows = await conn.fetch(
        "SELECT w.chat_key FROM ("
        " SELECT i.chat_key FROM inbox i WHERE i.status = 'pending' AND NOT (i.noticed = 1 AND EXISTS ("
        "  SELECT 1 FROM sessions s WHERE s.chat_key = i.chat_key AND s.closed = 0 AND s.state = 'asking'))"
        " UNION SELECT chat_key FROM outbox WHERE status = 'pending'"
        " UNION SELECT chat_key FROM sessions WHERE state = 'working' AND closed = 0"
        ") w LEFT JOIN chat_leases l ON l.chat_key = w.chat_key "
        "WHERE l.chat_key IS NULL OR l.owner IS NULL OR l.expires_at <= now() LIMIT $1",
        limit,
    )
    return [r[0] for r in rows]


async def lost(conn: asyncpg.Connection, lease: Lease) -> LeaseLost:
    """The error for a write under `lease`, describing the chat's lease row as it is now."""
    row = await conn.fetchrow("SELECT owner, fence FROM chat_leases WHERE chat_key = $1", lease.chat_key)
    return LeaseLost(lease.chat_key, lease.fence, None if row is None else row[1], None if row is None else row[0])
