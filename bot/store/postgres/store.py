"""PostgresStore: the Store protocol on PostgreSQL (asyncpg, one pool), for several processes.

Selected by BOT_DB_URL=postgresql://... (adapters.runtime.make_store). The layout follows
SqliteStore method for method, so the two read side by side:

- reads run on a pooled connection, with the same SQL as SQLite up to the placeholders;
- writes are the functions of bot.store.postgres.writes (the twins of bot.store.sqlite.writes), each run by
  `write()` in one transaction on one pooled connection, as SqliteStore hands the functions of
  writes.py to its GroupCommitWriter. Porting a write: its twin in pg_writes, then here the same
  one-line method as in sqlite.py with `self.write(partial(writes.NAME, ...))`;
- the writes of every step are server functions instead, one round trip each: `call()` runs
  bot.store.postgres.calls.NAME, whose statement checks the fence and writes in its own transaction.

The pieces around it, one module per concern:

    pg_connect   the pool (size, session settings such as idle_in_transaction_session_timeout),
                 connection errors -> StoreUnavailable naming BOT_DB_URL
    pg_migrate   migrations/postgres/NNNN_*.sql, applied at open() under an advisory lock
    pg_writes    the writes
    pg_calls     the writes of every step, as calls of server functions (one round trip each)
    pg_leases    chat leases with fencing numbers; the fence check inside a write's transaction
    pg_notify    LISTEN on a dedicated connection with reconnect; NOTIFY from any transaction

Fencing. `write(fn, fence=lease)` checks the lease inside the write's transaction (LeaseLost
once a newer lease exists). The protocol's methods take no lease argument (their signatures are
shared with SQLite); a chat's task says once which lease its writes carry:

    with store.fenced(lease):            # every write of this task (and tasks it starts)
        await store.append(...)          # is refused with LeaseLost after a takeover

`add_inbox` and `add_events` are never fenced: any process accepts an update for any chat, and
a deadline, a restart or a delivery outcome is noticed by whichever process sees it; the row is
stored and the chat's key NOTIFYed on INBOX_CHANNEL at commit, so the owner wakes up wherever it
runs and applies it in order (only the owner's writes change the chat).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

import asyncpg

from agent_core.schema import Message
from bot.store.base import (
    ChatEvent,
    ChatView,
    FeedbackRow,
    InboxRow,
    OutboxRow,
    QuestionRow,
    RunRow,
    RunUsage,
    SessionRow,
    SignoffRow,
    StagedInbox,
    StoreClosed,
    StoreCounts,
    StoreUnavailable,
    SuggestionRow,
    TurnStart,
)
from bot.store.migrate import Migration
from bot.store.postgres import calls, feedback, notify, suggestions, writes
from bot.store.postgres import leases as pg_leases
from bot.store.postgres.connect import (
    APPLICATION_NAME,
    IDLE_IN_TRANSACTION_TIMEOUT_S,
    LEASES_APPLICATION_NAME,
    LOST_ERRORS,
    POOL_MAX,
    connect,
    create_pool,
    unavailable,
)
from bot.store.postgres.leases import Lease, Taken
from bot.store.postgres.migrate import PG_MIGRATIONS_DIR, apply_migrations, discover
from bot.store.postgres.notify import Listener, OnConnect, OnNotify
from bot.store.postgres.writes import INBOX_CHANNEL
from bot.store.sqlite.store import _bodies, _body, _inbox, _question, _signoff, _signoff_row
from bot.store.sqlite.suggestions import SUGGESTION_COLS
from bot.store.sqlite.suggestions import suggestion as suggestion_row
from bot.store.sqlite.writes import (
    OPEN_SIGNOFF,
    OUTBOX_COLS,
    QUESTION_COLS,
    RUN_COLS,
    SESSION_COLS,
    SIGNOFF_COLS,
)

T = TypeVar("T")
Row = tuple[Any, ...]
_SESSION_COLS = SESSION_COLS
_QUESTION_COLS = QUESTION_COLS
_OUTBOX_COLS = OUTBOX_COLS  # the same columns as SQLite's
_INBOX_COLS = "id, platform, dedup_id, chat_key, body, received_at, kind, noticed"
_CHAT_VIEW = (
    f"SELECT (SELECT json_agg(json_build_array({_INBOX_COLS}) ORDER BY id) FROM ("
    f"SELECT {_INBOX_COLS} FROM inbox WHERE chat_key = $1 AND status = 'pending' ORDER BY id LIMIT $2) i), "
    f"(SELECT json_build_array({_SESSION_COLS}) FROM sessions WHERE chat_key = $1 AND closed = 0), "
    f"(SELECT json_agg(json_build_array({', '.join('q.' + c.strip() for c in _QUESTION_COLS.split(','))}) "
    "ORDER BY q.asked_at, q.tool_call_id) FROM questions q JOIN sessions s ON s.id = q.session_id "
    "WHERE s.chat_key = $1 AND s.closed = 0 AND s.state = 'asking' AND q.status = 'waiting'), "
    # the open session's messages while rows are pending (a round trip fewer on the way to a run)
    "(SELECT json_agg(m.body ORDER BY m.seq) FROM messages m JOIN sessions s ON s.id = m.session_id "
    "WHERE s.chat_key = $1 AND s.closed = 0 AND EXISTS (SELECT 1 FROM inbox WHERE chat_key = $1 AND status = 'pending'))"
)
PING_TIMEOUT_S = 2.0


class PostgresStore:
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
            init=calls.warm,
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
            await asyncio.wait_for(self._all("SELECT 1"), timeout=PING_TIMEOUT_S)
        except (TimeoutError, StoreUnavailable, StoreClosed, asyncpg.PostgresError, asyncpg.InterfaceError):
            return False
        return True

    # -- the two primitives: a read, a write in a transaction ------------------------------
    def _need_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StoreClosed("the store is not open")
        return self._pool

    async def _one(self, sql: str, *args: object) -> Row | None:
        rows = await self._all(sql, *args)
        return rows[0] if rows else None

    async def _all(self, sql: str, *args: object) -> list[Row]:
        pool = self._need_pool()
        try:
            return [tuple(r) for r in await pool.fetch(sql, *args)]
        except LOST_ERRORS as exc:
            raise unavailable(self.url, exc, "read from PostgreSQL") from exc

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
                        return await _fenced(conn, fn, fence)
                    if single:
                        return await fn(conn)
                    async with conn.transaction():
                        return await fn(conn)
                except asyncpg.InterfaceError as exc:  # the connection died under the transaction
                    if _gone(conn):
                        raise unavailable(self.url, exc.__context__ or exc, "write to PostgreSQL") from exc
                    raise
        except LOST_ERRORS as exc:
            raise unavailable(self.url, exc, "write to PostgreSQL") from exc

    async def call(self, fn: Callable[[asyncpg.Connection, Lease | None], Awaitable[T]]) -> T:
        """`fn(conn, lease)` sends one statement calling a write's server function (pg_calls),
        which checks the lease set by `fenced()` and writes in that statement's transaction: one
        round trip, returning once committed. LeaseLost, nothing written, as with `write`."""
        return await self._transaction(partial(_called, fn=fn, lease=self._fence.get()), None, single=True)

    @contextlib.contextmanager
    def fenced(self, lease: Lease) -> Iterator[Lease]:
        """Within this block (in this task, and tasks created in it) every write but add_inbox
        carries `lease`'s fence."""
        token = self._fence.set(lease)
        try:
            yield lease
        finally:
            self._fence.reset(token)

    # -- leases and wake-ups (PostgreSQL only; see pg_leases, pg_notify) --------------------
    async def acquire_lease(self, chat_key: str, owner: str, ttl_s: float) -> Lease | None:
        """The chat's lease if it is free, released or expired; None while someone holds it."""
        return await self._transaction(partial(pg_leases.acquire, chat_key=chat_key, owner=owner, ttl_s=ttl_s), None,
                                       single=True)

    async def take_lease(self, chat_key: str, owner: str, ttl_s: float) -> Taken | None:
        """`acquire_lease`, with what the chat's previous owner left: its open session if that was
        left working, and whether its outbox has rows to send (read in the same round trip, once
        the lease is ours)."""
        return await self._transaction(partial(pg_leases.take, chat_key=chat_key, owner=owner, ttl_s=ttl_s), None,
                                       single=True)

    async def renew_lease(self, lease: Lease, ttl_s: float) -> Lease:
        """The lease extended to the database's now() + ttl_s; LeaseLost once a newer one exists."""
        return await self._transaction(partial(pg_leases.renew, lease=lease, ttl_s=ttl_s), None)

    async def release_lease(self, lease: Lease) -> bool:
        """Give the chat up; False when the lease was no longer ours."""
        return await self._transaction(partial(pg_leases.release, lease=lease), None, single=True)

    async def renew_leases(self, leases: Sequence[Lease], ttl_s: float) -> dict[str, Lease]:
        """Every lease still held, renewed in one transaction; a chat missing from the result is lost."""
        return await self._transaction(partial(pg_leases.renew_many, leases=list(leases), ttl_s=ttl_s), None)

    async def unowned_chats_with_work(self, limit: int = 500) -> list[str]:
        return await self._transaction(partial(pg_leases.unowned_chats_with_work, limit=limit), None)

    async def current_lease(self, chat_key: str) -> Lease | None:
        return await self._transaction(partial(pg_leases.current, chat_key=chat_key), None)

    async def unowned_chats_with_inbox(self, limit: int = 100) -> list[str]:
        return await self._transaction(partial(pg_leases.unowned_chats_with_inbox, limit=limit), None)

    async def notify_chat(self, chat_key: str) -> None:
        """Wake the chat's owner, in whichever process (an update stored with `notify=False` by a
        process that then found the chat held elsewhere)."""
        await self._transaction(partial(notify.notify, channel=INBOX_CHANNEL, payload=chat_key), None,
                                single=True)

    def listener(self, channels: Sequence[str], on_notify: OnNotify, *, on_connect: OnConnect | None = None,
                 application_name: str = APPLICATION_NAME, **kwargs: float) -> Listener:
        """A Listener on this store's database (not started: `await listener.start()`)."""
        return Listener(self.url, channels, on_notify, on_connect=on_connect, application_name=application_name,
                        **kwargs)

    async def bot_processes(self) -> int:
        """How many bot processes serve this database now (at least this one): each keeps one
        connection listening for its chats (bot.cluster.leases)."""
        row = await self._one(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
            LEASES_APPLICATION_NAME)
        return max(1, int(row[0]) if row else 1)

    # -- inbox -----------------------------------------------------------------------------
    async def add_inbox(self, platform: str, dedup_id: str, chat_key: str, body: str,
                        received_at: float | None = None, *, notify: bool = True) -> int | None:
        # Never fenced: any process stores an update for any chat (and wakes its owner).
        # A posted question is answered only by inbox rows with ids above the watermark that
        # outbox_sent records. SQLite's single writer commits in call order, so an update stored
        # after the delivery worker recorded a posting always lands above it; here the two
        # transactions would race on separate connections, and an answer sent the moment the
        # question appeared could get an id below the watermark and never answer it. So an update
        # waits for the postings this process is recording (a round trip at most).
        if self._recording_posts:
            await asyncio.wait(set(self._recording_posts))
        return await self._transaction(partial(writes.add_inbox, platform=platform, dedup_id=dedup_id,
                                               chat_key=chat_key, body=body, received_at=received_at,
                                               notify=notify),
                                       None, single=True)

    async def stage_inbox(self, platform: str, dedup_id: str, chat_key: str, body: str, *,
                          notify: bool = True) -> StagedInbox:
        # One statement commits as it writes: nothing to start before the commit here.
        received_at = time.time()
        inbox_id = await self.add_inbox(platform, dedup_id, chat_key, body, received_at, notify=notify)
        committed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        committed.set_result(None)
        return StagedInbox(inbox_id, received_at, committed)

    async def add_events(self, events: Sequence[ChatEvent]) -> None:
        # Never fenced, like add_inbox: the process that noticed the event need not own the chat.
        if events:
            await self._transaction(partial(writes.add_events, events=list(events)), None)

    async def inbox_for(self, chat_key: str, limit: int = 100) -> list[InboxRow]:
        rows = await self._all(
            f"SELECT {_INBOX_COLS} FROM inbox WHERE chat_key = $1 AND status = 'pending' ORDER BY id LIMIT $2",
            chat_key, limit,
        )
        return [_inbox(r) for r in rows]

    async def chat_view(self, chat_key: str, limit: int = 100) -> ChatView:
        # one statement, so one round trip and one snapshot: each part comes back as JSON arrays
        # of the columns (text, integers and doubles only, which JSON carries exactly)
        row = await self._one(_CHAT_VIEW, chat_key, limit)
        assert row is not None
        rows, found, questions, bodies = (json.loads(part) if part is not None else None for part in row)
        session = SessionRow(*found) if found else None
        history = [Message.model_validate_json(b) for b in bodies or []] if session is not None and rows else None
        return ChatView([_inbox(r) for r in rows or []],
                        session, [_question(r) for r in questions or []], history)

    async def chats_with_inbox(self) -> list[str]:
        rows = await self._all("SELECT DISTINCT chat_key FROM inbox WHERE status = 'pending'")
        return [r[0] for r in rows]

    async def finish_inbox(self, inbox_id: int, *, drop_earlier: bool = False) -> None:
        await self.write(partial(writes.finish_inbox, inbox_id=inbox_id, drop_earlier=drop_earlier))

    async def fail_inbox(self, inbox_id: int, error: str) -> None:
        await self.write(partial(writes.fail_inbox, inbox_id=inbox_id, error=error))

    async def remember_location(self, chat_key: str, location: str, lang: str) -> None:
        await self.write(partial(writes.remember_location, chat_key=chat_key, location=location, lang=lang))

    # -- sessions --------------------------------------------------------------------------
    async def get_session(self, chat_key: str) -> SessionRow | None:
        row = await self._one(f"SELECT {_SESSION_COLS} FROM sessions WHERE chat_key = $1 AND closed = 0", chat_key)
        return SessionRow(*row) if row else None

    async def start_turn(self, turn: TurnStart) -> SessionRow:
        row = await self.call(partial(calls.start_turn, turn=turn, body=_body(turn.message)))
        return SessionRow(*row)

    async def load_messages(self, session_id: str) -> list[Message]:
        rows = await self._all("SELECT body FROM messages WHERE session_id = $1 ORDER BY seq", session_id)
        return [Message.model_validate_json(r[0]) for r in rows]

    async def append(
        self, session_id: str, messages: Sequence[Message], *, step: int, inbox_done: Sequence[int] = ()
    ) -> None:
        await self.call(partial(calls.append_step, session_id=session_id, bodies=_bodies(messages), step=step,
                                inbox_done=list(inbox_done)))

    async def pause(
        self, session_id: str, messages: Sequence[Message], questions: Sequence[QuestionRow], *, step: int,
        inbox_done: Sequence[int] = (), usage: RunUsage | None = None,
    ) -> list[int]:
        rows = [(session_id, q.tool_call_id, q.question, json.dumps(list(q.options), ensure_ascii=False), q.asker_id,
                 q.asked_at, q.deadline, q.remind_at, q.addressee) for q in questions]
        return await self.call(partial(calls.pause, session_id=session_id, bodies=_bodies(messages),
                                       questions=rows, step=step, inbox_done=list(inbox_done), usage=usage))

    async def finish_run(
        self, session_id: str, messages: Sequence[Message], *, outbox: Sequence[tuple[str, str]] = (),
        inbox_done: Sequence[int] = (), signoff: SignoffRow | None = None, usage: RunUsage | None = None,
    ) -> list[int]:
        return await self.call(partial(calls.finish_run, session_id=session_id, bodies=_bodies(messages),
                                       outbox=list(outbox), inbox_done=list(inbox_done),
                                       signoff=_signoff_row(signoff), usage=usage))

    async def interrupt(
        self, session_id: str, fillers: Sequence[Message], *, close: bool, notice: str | None = None
    ) -> None:
        await self.write(partial(writes.interrupt, session_id=session_id, bodies=_bodies(fillers), close=close,
                                 notice=notice))

    async def close_session(self, chat_key: str) -> None:
        await self.write(partial(writes.close_session, chat_key=chat_key))

    async def add_usage(self, usage: RunUsage) -> None:
        await self.call(partial(calls.add_usage, usage=usage))

    async def recent_runs(self, limit: int = 50) -> list[RunRow]:
        rows = await self._all(f"SELECT {RUN_COLS} FROM runs ORDER BY updated_at DESC LIMIT $1", limit)
        return [RunRow(*r) for r in rows]

    async def working_sessions(self) -> list[SessionRow]:
        rows = await self._all(f"SELECT {_SESSION_COLS} FROM sessions WHERE state = 'working' AND closed = 0")
        return [SessionRow(*r) for r in rows]

    async def session_by_id(self, session_id: str) -> SessionRow | None:
        row = await self._one(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = $1", session_id)
        return SessionRow(*row) if row else None

    async def open_sessions(self, limit: int = 100) -> list[SessionRow]:
        rows = await self._all(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE closed = 0 ORDER BY updated_at DESC LIMIT $1", limit
        )
        return [SessionRow(*r) for r in rows]

    async def failed_deliveries(self, limit: int = 100) -> list[OutboxRow]:
        rows = await self._all(f"SELECT {_OUTBOX_COLS} FROM outbox WHERE status = 'failed' ORDER BY id DESC LIMIT $1",
                               limit)
        return [OutboxRow(*r) for r in rows]

    async def retry_outbox(self, outbox_id: int) -> str | None:
        # the operator's hand, not a chat's task: it carries no lease (any process may queue it)
        return await self._transaction(partial(writes.retry_outbox, outbox_id=outbox_id), None)

    # -- questions -------------------------------------------------------------------------
    async def get_question(self, session_id: str) -> QuestionRow | None:
        row = await self._one(
            f"SELECT {_QUESTION_COLS} FROM questions WHERE session_id = $1 AND status = 'waiting' "
            "ORDER BY asked_at LIMIT 1",
            session_id,
        )
        return _question(row) if row else None

    async def question_for_chat(self, chat_key: str) -> QuestionRow | None:
        row = await self._one(
            f"SELECT {', '.join('q.' + c.strip() for c in _QUESTION_COLS.split(','))} FROM questions q "
            "JOIN sessions s ON s.id = q.session_id "
            "WHERE s.chat_key = $1 AND s.closed = 0 AND s.state = 'asking' AND q.status = 'waiting' "
            "ORDER BY q.asked_at LIMIT 1",
            chat_key,
        )
        return _question(row) if row else None

    async def questions_for_chat(self, chat_key: str) -> list[QuestionRow]:
        rows = await self._all(
            f"SELECT {', '.join('q.' + c.strip() for c in _QUESTION_COLS.split(','))} FROM questions q "
            "JOIN sessions s ON s.id = q.session_id "
            "WHERE s.chat_key = $1 AND s.closed = 0 AND s.state = 'asking' AND q.status = 'waiting' "
            "ORDER BY q.asked_at, q.tool_call_id",
            chat_key,
        )
        return [_question(r) for r in rows]

    async def resolve_question(
        self, session_id: str, tool_call_id: str, answer: Message, *, status: str, inbox_id: int | None
    ) -> bool:
        return await self.call(partial(calls.resolve_question, session_id=session_id,
                                       tool_call_id=tool_call_id, body=_body(answer), status=status,
                                       inbox_id=inbox_id))

    async def waiting_questions(self) -> list[QuestionRow]:
        rows = await self._all(f"SELECT {_QUESTION_COLS} FROM questions WHERE status = 'waiting'")
        return [_question(r) for r in rows]

    async def due_questions(self, now: float) -> list[QuestionRow]:
        rows = await self._all(
            f"SELECT {_QUESTION_COLS} FROM questions WHERE status = 'waiting' AND deadline <= $1 ORDER BY deadline",
            float(now),
        )
        return [_question(r) for r in rows]

    async def next_deadline(self, after: float = 0.0) -> float | None:
        row = await self._one(
            "SELECT MIN(t) FROM (SELECT deadline AS t FROM questions WHERE status = 'waiting' "
            "UNION ALL SELECT remind_at FROM questions WHERE status = 'waiting' AND remind_at IS NOT NULL "
            f"UNION ALL SELECT CASE WHEN reminded = 0 THEN remind_at ELSE deadline END FROM signoffs WHERE {OPEN_SIGNOFF} "
            f"UNION ALL SELECT deadline FROM signoffs WHERE {OPEN_SIGNOFF}) AS due WHERE t > $1",
            float(after),
        )
        return float(row[0]) if row and row[0] is not None else None

    async def due_reminders(self, now: float) -> list[QuestionRow]:
        rows = await self._all(
            f"SELECT {_QUESTION_COLS} FROM questions WHERE status = 'waiting' AND remind_at <= $1 ORDER BY remind_at",
            float(now),
        )
        return [_question(r) for r in rows]

    async def remind(self, session_id: str, tool_call_id: str, body: str, *, inbox_id: int) -> int | None:
        return await self.write(partial(writes.remind, session_id=session_id, tool_call_id=tool_call_id, body=body,
                                        inbox_id=inbox_id))

    # -- sign-offs -------------------------------------------------------------------------
    async def signoff_for_chat(self, chat_key: str) -> SignoffRow | None:
        row = await self._one(
            f"SELECT {', '.join('g.' + c.strip() for c in SIGNOFF_COLS.split(','))} FROM signoffs g "
            f"JOIN sessions s ON s.id = g.session_id WHERE s.chat_key = $1 AND s.closed = 0 "
            "ORDER BY g.requested_at DESC LIMIT 1",
            chat_key,
        )
        return _signoff(row) if row else None

    async def decide_signoff(
        self, signoff_id: str, status: str, by: str, *, reason: str | None = None, inbox_id: int | None = None,
        outbox: Sequence[tuple[str, str]] = (),
    ) -> list[int] | None:
        return await self.write(partial(writes.decide_signoff, signoff_id=signoff_id, status=status, by=by,
                                            reason=reason, inbox_id=inbox_id, outbox=list(outbox)))

    async def signoff_reminded(
        self, signoff_id: str, *, inbox_id: int | None, outbox: Sequence[tuple[str, str]] = ()
    ) -> list[int] | None:
        return await self.write(partial(writes.signoff_reminded, signoff_id=signoff_id, inbox_id=inbox_id,
                                            outbox=list(outbox)))

    async def due_signoffs(self, now: float) -> list[SignoffRow]:
        rows = await self._all(
            f"SELECT {SIGNOFF_COLS} FROM signoffs WHERE {OPEN_SIGNOFF} "
            f"AND ((reminded = 0 AND remind_at <= $1) OR deadline <= $1) ORDER BY deadline",
            now,
        )
        return [_signoff(r) for r in rows]

    async def add_approver(self, platform: str, channel_id: str, user_id: str, added_by: str) -> None:
        await self.write(partial(writes.add_approver, platform=platform, channel_id=channel_id, user_id=user_id,
                                     added_by=added_by))

    # -- suggestions (bot.chat.suggestions) --------------------------------------------------
    async def add_suggestion(self, suggestion: SuggestionRow, *, inbox_id: int,
                             outbox: Sequence[tuple[str, str]] = ()) -> list[int]:
        return await self.write(partial(suggestions.add_suggestion, suggestion=suggestion, inbox_id=inbox_id,
                                              outbox=list(outbox)))

    async def get_suggestion(self, suggestion_id: str) -> SuggestionRow | None:
        row = await self._one(f"SELECT {SUGGESTION_COLS} FROM suggestions WHERE id = $1", suggestion_id)
        return suggestion_row(row) if row else None

    async def decide_suggestion(
        self, suggestion_id: str, status: str, by: str, *, inbox_id: int | None,
        adopted: ChatEvent | None = None, outbox: Sequence[tuple[str, str]] = (),
    ) -> list[int] | None:
        return await self.write(partial(suggestions.decide_suggestion, suggestion_id=suggestion_id, status=status,
                                              by=by, inbox_id=inbox_id, adopted=adopted, outbox=list(outbox)))

    async def channel_approvers(self, platform: str, channel_id: str) -> list[str]:
        rows = await self._all(
            "SELECT user_id FROM channel_approvers WHERE platform = $1 AND channel_id = $2 ORDER BY added_at",
            platform, channel_id,
        )
        return [str(r[0]) for r in rows]

    async def record_feedback(self, chat_key: str, session_id: str, run_no: int, user_id: str, rating: str,
                              at: float) -> bool:
        return await self.write(partial(feedback.record_feedback, chat_key=chat_key, session_id=session_id,
                                        run_no=run_no, user_id=user_id, rating=rating, at=at))

    async def recent_feedback(self, limit: int = 100) -> list[FeedbackRow]:
        return [FeedbackRow(*r) for r in await self._all(feedback.RECENT, limit)]

    # -- outbox ----------------------------------------------------------------------------
    async def queue_outbox(self, chat_key: str, session_id: str, kind: str, body: str) -> int:
        return await self.write(partial(writes.queue_outbox, chat_key=chat_key, session_id=session_id, kind=kind,
                                        body=body))

    async def notice_inbox(self, inbox_id: int, chat_key: str, session_id: str, body: str) -> int:
        return await self.write(partial(writes.notice_inbox, inbox_id=inbox_id, chat_key=chat_key,
                                        session_id=session_id, body=body))

    async def pending_outbox(self, chat_key: str | None = None) -> list[OutboxRow]:
        if chat_key is None:
            rows = await self._all(f"SELECT {_OUTBOX_COLS} FROM outbox WHERE status = 'pending' ORDER BY id")
        else:
            rows = await self._all(
                f"SELECT {_OUTBOX_COLS} FROM outbox WHERE status = 'pending' AND chat_key = $1 ORDER BY id", chat_key
            )
        return [OutboxRow(*r) for r in rows]

    async def chats_with_outbox(self) -> list[str]:
        rows = await self._all(
            "SELECT chat_key FROM outbox WHERE status = 'pending' GROUP BY chat_key ORDER BY MIN(id)"
        )
        return [r[0] for r in rows]

    async def failed_outbox(self, chat_key: str) -> list[OutboxRow]:
        rows = await self._all(
            f"SELECT {_OUTBOX_COLS} FROM outbox WHERE status = 'failed' AND chat_key = $1 ORDER BY id", chat_key
        )
        return [OutboxRow(*r) for r in rows]

    async def outbox_part_sent(self, outbox_id: int, parts_sent: int, message_id: str) -> None:
        await self.write(partial(writes.outbox_part_sent, outbox_id=outbox_id, parts_sent=parts_sent,
                                 message_id=message_id))

    async def question_watermark(self) -> int | None:
        row = await self._one("SELECT COALESCE(MAX(id), 0) FROM inbox")
        return int(row[0]) if row else 0

    async def outbox_sent(self, outbox_id: int, parts_sent: int, message_id: str | None,
                          posted_after: int | None = None) -> None:
        # Registered before the first await, so an add_inbox called after this call waits for it.
        recorded: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._recording_posts.add(recorded)
        try:
            await self.call(partial(calls.outbox_sent, outbox_id=outbox_id, parts_sent=parts_sent,
                                    message_id=message_id, posted_after=posted_after))
        finally:
            self._recording_posts.discard(recorded)
            recorded.set_result(None)

    async def outbox_attempt_failed(self, outbox_id: int, error: str) -> None:
        await self.write(partial(writes.outbox_attempt_failed, outbox_id=outbox_id, error=error))

    async def outbox_failed(self, outbox_id: int, error: str) -> None:
        await self.write(partial(writes.outbox_failed, outbox_id=outbox_id, error=error))

    async def counts(self) -> StoreCounts:
        row = await self._one(
            "SELECT (SELECT COUNT(*) FROM questions WHERE status = 'waiting'), "
            "(SELECT COUNT(*) FROM sessions WHERE state = 'asking' AND closed = 0), "
            "(SELECT COUNT(*) FROM outbox WHERE status = 'pending'), "
            "(SELECT COUNT(*) FROM outbox WHERE status = 'failed'), "
            "(SELECT COUNT(*) FROM inbox WHERE status = 'pending')"
        )
        assert row is not None
        return StoreCounts(*(int(v) for v in row))


async def _fenced(conn: asyncpg.Connection, fn: Callable[[asyncpg.Connection], Awaitable[T]], lease: Lease) -> T:
    """`fn(conn)` in a transaction that first checks `lease` (pg_leases.begin_fenced: the lease
    row stays locked FOR SHARE until COMMIT, so no takeover commits in between). BEGIN
    and the check travel as one simple query, so a fenced write costs one round trip more than
    its own statements and COMMIT, not two: a chat's every step is one such write."""
    if await conn.execute(pg_leases.begin_fenced(lease)) != "SELECT 1":
        await conn.execute("ROLLBACK")
        raise await pg_leases.lost(conn, lease)
    try:
        result = await fn(conn)
    except BaseException:
        if not _gone(conn):  # else the server has ended the transaction with the connection
            with contextlib.suppress(Exception):  # the pool rolls back what is still open on release
                await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")
    return result


async def _called(conn: asyncpg.Connection, fn: Callable[[asyncpg.Connection, Lease | None], Awaitable[T]],
                  lease: Lease | None) -> T:
    try:
        return await fn(conn, lease)
    except asyncpg.PostgresError as exc:
        if lease is None or getattr(exc, "sqlstate", None) != calls.LEASE_LOST:
            raise
    # the statement's transaction was rolled back with the error: describe the lease row now
    raise await pg_leases.lost(conn, lease)


def _gone(conn: asyncpg.Connection) -> bool:
    """The pooled connection is closed (a proxy the pool already took back counts as closed)."""
    try:
        return bool(conn.is_closed())
    except asyncpg.InterfaceError:
        return True
