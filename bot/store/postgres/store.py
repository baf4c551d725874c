"""PostgresStore: the Store protocol on PostgreSQL (asyncpg, one pool), for several processes.

Selected by BOT_DB_URL=postgresql://... (adapters.runtime.make_store). Its reads and the records
of its writes are written once for both databases (bot.store.reads, bot.store.writes); this
class gives them PostgreSQL's two primitives:

- `_rows(sql, ...)`: a read on a pooled connection;
- `_write(name, record)`: one statement calling the write's server function with its record
  (bot.store.postgres.writes), which checks the fence and writes in its own transaction.

The pieces around it, one module per concern:

    connect     the pool (size, session settings such as idle_in_transaction_session_timeout),
                connection errors -> StoreUnavailable naming BOT_DB_URL
    migrate     migrations/postgres/NNNN_*.sql, applied at open() under an advisory lock
    writes      how a write reaches its server function
    leases      chat leases with fencing numbers; the fence check inside a write's transaction
    notify      LISTEN on a dedicated connection with reconnect; NOTIFY from any transaction
    cluster     the store's methods for several processes: leases, wake-ups (ClusterCalls)

Fencing. The protocol's methods take no lease argument (their signatures are shared with
SQLite); a chat's task says once which lease its writes carry:

    with store.fenced(lease):            # every write of this task (and tasks it starts)
        await store.append(...)          # is refused with LeaseLost after a takeover

`add_inbox`, `add_events` and `retry_outbox` are never fenced: any process accepts an update for
any chat, and a deadline, a restart or a delivery outcome is noticed by whichever process sees
it; the row is stored and the chat's key NOTIFYed at commit, so the owner wakes up wherever it
runs and applies it in order (only the owner's writes change the chat). `write(fn, fence=...)`
runs any other function of a connection in one fenced transaction (the web page's events).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from typing import Any, TypeVar

import asyncpg

from agent_core.schema import Message
from bot.store.errors import StoreClosed, StoreUnavailable
from bot.store.migrate import Migration
from bot.store.postgres import writes
from bot.store.postgres.cluster import ClusterCalls
from bot.store.postgres.connect import (
    IDLE_IN_TRANSACTION_TIMEOUT_S,
    LOST_ERRORS,
    POOL_MAX,
    connect,
    create_pool,
    gone,
    unavailable,
)
from bot.store.postgres.leases import Lease, in_fenced_transaction
from bot.store.postgres.migrate import PG_MIGRATIONS_DIR, apply_migrations, discover
from bot.store.reads import Row, StoreReads
from bot.store.rows import ChatView, InboxRow, QuestionRow, SessionRow, columns, loaded
from bot.store.writes import Record, StoreWrites

T = TypeVar("T")
_CHAT_VIEW = (
    f"SELECT (SELECT json_agg(json_build_array({columns(InboxRow)}) ORDER BY id) FROM ("
    f"SELECT {columns(InboxRow)} FROM inbox WHERE chat_key = $1 AND status = 'pending' ORDER BY id LIMIT $2) i), "
    f"(SELECT json_build_array({columns(SessionRow)}) FROM sessions WHERE chat_key = $1 AND closed = 0), "
    f"(SELECT json_agg(json_build_array({columns(QuestionRow, 'q')}) "
    "ORDER BY q.asked_at, q.tool_call_id) FROM questions q JOIN sessions s ON s.id = q.session_id "
    "WHERE s.chat_key = $1 AND s.closed = 0 AND s.state = 'asking' AND q.status = 'waiting'), "
    # the open session's messages while rows are pending (a round trip fewer on the way to a run)
    "(SELECT json_agg(m.body ORDER BY m.seq) FROM messages m JOIN sessions s ON s.id = m.session_id "
    "WHERE s.chat_key = $1 AND s.closed = 0 AND EXISTS (SELECT 1 FROM inbox WHERE chat_key = $1 AND status = 'pending'))"
)
PING_TIMEOUT_S = 2.0


class PostgresStore(StoreReads, StoreWrites, ClusterCalls):
    def __init__(
        self, url: str, *, pool_min: int | None = None, pool_max: int = POOL_MAX,
        idle_in_transaction_s: float = IDLE_IN_TRANSACTION_TIMEOUT_S, migrations_dir: Any = PG_MIGRATIONS_DIR,
    ) -> None:
        self.url = url
        self.pool_min, self.pool_max = pool_min, pool_max
        self.idle_in_transaction_s = idle_in_transaction_s
        self._migrations_dir = migrations_dir
        self._pool: asyncpg.Pool | None = None
        # Per store, so two stores in one process (tests: two "processes") never share a fence.
        self._fence: contextvars.ContextVar[Lease | None] = contextvars.ContextVar(f"fence-{id(self)}", default=None)
        self._recording_posts: set[asyncio.Future[None]] = set()  # outbox_sent writes in flight (see add_inbox)

    async def open(self) -> None:
        """Create or update the schema in the URL's database, then open the pool.
        StoreUnavailable (naming BOT_DB_URL) when the database cannot be reached."""
        migrations: list[Migration] = discover(self._migrations_dir)
        conn = await connect(self.url, idle_in_transaction_s=self.idle_in_transaction_s)
        try:
            await apply_migrations(conn, migrations)
        except (*LOST_ERRORS, asyncpg.InsufficientPrivilegeError) as exc:
            raise unavailable(self.url, exc, "create the bot's tables") from exc
        finally:
            with contextlib.suppress(Exception):
                await conn.close()
        self._pool = await create_pool(
            self.url, min_size=self.pool_min, max_size=self.pool_max, idle_in_transaction_s=self.idle_in_transaction_s,
            init=writes.warm,
        )

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            try:
                await asyncio.wait_for(pool.close(), timeout=10)
            except Exception:  # a connection stuck or already lost: close the rest hard
                pool.terminate()

    async def ping(self) -> bool:
        try:
            await asyncio.wait_for(self._rows("SELECT 1"), timeout=PING_TIMEOUT_S)
        except (TimeoutError, StoreUnavailable, StoreClosed, asyncpg.PostgresError, asyncpg.InterfaceError):
            return False
        return True

    # -- the primitives: a read, a write (a server function), a transaction ------------------
    def _need_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StoreClosed("the store is not open")
        return self._pool

    async def _rows(self, sql: str, *args: object, scan: bool = False) -> list[Row]:
        pool = self._need_pool()
        try:
            return [tuple(r) for r in await pool.fetch(sql, *args)]
        except LOST_ERRORS as exc:
            raise unavailable(self.url, exc, "read from PostgreSQL") from exc

    async def _write(self, name: str, record: Record, *, fenced: bool = True) -> Any:
        """One statement: PostgreSQL runs it as a transaction of its own (no BEGIN, no COMMIT)."""
        lease = self._fence.get() if fenced else None
        return await self._transaction(partial(writes.call, name=name, record=writes.record_json(record, lease),
                                               lease=lease), None, single=True)

    async def write(self, fn: Callable[[asyncpg.Connection], Awaitable[T]], *, fence: Lease | None = None) -> T:
        """Run `fn(conn)` in one transaction; return once it is committed. With a fence (the
        argument, else the one set by `fenced()`), check it first: LeaseLost, nothing written,
        once a newer lease of that chat exists. StoreUnavailable when the database is lost (the
        transaction is then rolled back by the server)."""
        return await self._transaction(fn, fence or self._fence.get())

    async def _transaction(self, fn: Callable[[asyncpg.Connection], Awaitable[T]], fence: Lease | None,
                           *, single: bool = False) -> T:
        """`single`: `fn` sends one statement, which PostgreSQL runs as a transaction of its own,
        so no BEGIN and COMMIT (two round trips fewer)."""
        pool = self._need_pool()
        try:
            async with pool.acquire() as conn:
                try:
                    if fence is not None:
                        return await in_fenced_transaction(conn, fn, fence)
                    if single:
                        return await fn(conn)
                    async with conn.transaction():
                        return await fn(conn)
                except asyncpg.InterfaceError as exc:  # the connection died under the transaction
                    if gone(conn):
                        raise unavailable(self.url, exc.__context__ or exc, "write to PostgreSQL") from exc
                    raise
        except LOST_ERRORS as exc:
            raise unavailable(self.url, exc, "write to PostgreSQL") from exc

    @contextlib.contextmanager
    def fenced(self, lease: Lease) -> Iterator[Lease]:
        """Within this block (in this task, and tasks created in it) every write of a chat
        carries `lease`'s fence."""
        token = self._fence.set(lease)
        try:
            yield lease
        finally:
            self._fence.reset(token)

    # -- what the two databases do differently -------------------------------------------------
    async def add_inbox(self, platform: str, dedup_id: str, chat_key: str, body: str, *,
                        notify: bool = True) -> int | None:
        # A posted question is answered only by inbox rows with ids above its watermark. The
        # delivery worker records it before posting (record_watermark); outbox_sent called
        # without one takes the newest id at its write. SQLite's single writer commits in call
        # order, so an update stored after such a record always lands above it; here the two
        # transactions would race on separate connections, and an answer sent the moment the
        # question appeared could get an id below the watermark and never answer it. So an update
        # waits for the postings this process is recording (a round trip at most).
        if self._recording_posts:
            await asyncio.wait(set(self._recording_posts))
        return await super().add_inbox(platform, dedup_id, chat_key, body, notify=notify)

    async def outbox_sent(self, outbox_id: int, parts_sent: int, message_id: str | None,
                          posted_after: int | None = None) -> None:
        # Registered before the first await, so an add_inbox called after this call waits for it.
        recorded: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._recording_posts.add(recorded)
        try:
            await super().outbox_sent(outbox_id, parts_sent, message_id, posted_after)
        finally:
            self._recording_posts.discard(recorded)
            recorded.set_result(None)

    async def chat_view(self, chat_key: str, limit: int = 100) -> ChatView:
        # one statement, so one round trip and one snapshot: each part comes back as JSON arrays
        # of the columns (text, integers and doubles only, which JSON carries exactly)
        row = await self._row(_CHAT_VIEW, chat_key, limit)
        assert row is not None
        rows, found, questions, bodies = (json.loads(part) if part is not None else None for part in row)
        session = loaded(SessionRow, found) if found else None
        history = [Message.model_validate_json(b) for b in bodies or []] if session is not None and rows else None
        return ChatView([loaded(InboxRow, r) for r in rows or []], session,
                        [loaded(QuestionRow, r) for r in questions or []], history)
