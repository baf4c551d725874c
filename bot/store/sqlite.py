"""SqliteStore: the Store protocol on SQLite through aiosqlite (WAL, synchronous=FULL, one writer)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from agent_core.schema import Message
from bot.store.base import (
    InboxRow,
    OutboxRow,
    QuestionRow,
    SessionRow,
    StoreClosed,
    StoreError,
    TurnStart,
)
from bot.store.migrate import MIGRATIONS_DIR, Migration, apply_migrations, discover

Row = tuple[Any, ...]
_SESSION_COLS = (
    "id, chat_key, state, lang, asker_id, asker_name, run_no, run_steps, request, location, created_at, updated_at, "
    "run_started_at, prompt_tokens, completion_tokens, llm_calls"
)
_QUESTION_COLS = "session_id, tool_call_id, question, options, asker_id, asked_at, deadline, posted_message_id, status"


class SqliteStore:
    def __init__(self, path: Path | str, *, migrations_dir: Path = MIGRATIONS_DIR) -> None:
        self.path = Path(path)
        self._migrations_dir = migrations_dir
        self._conn: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()  # one statement sequence at a time on the single connection
        self._batch: asyncio.Future[None] | None = None  # the open group-commit transaction
        self._committer: asyncio.Task[None] | None = None

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The migration runner is synchronous: run it on its own connection before serving.
        await asyncio.to_thread(_migrate_file, str(self.path), discover(self._migrations_dir))
        conn = await aiosqlite.connect(str(self.path), isolation_level=None)
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=FULL")
        await conn.execute("PRAGMA busy_timeout=5000")
        # WAL lets readers run beside the one writer: reads never wait for a commit's fsync,
        # and they see only committed data (a writer returns only after its commit).
        reader = await aiosqlite.connect(str(self.path), isolation_level=None)
        await reader.execute("PRAGMA busy_timeout=5000")
        await reader.execute("PRAGMA query_only=ON")
        self._conn = conn
        self._reader = reader

    async def close(self) -> None:
        if self._committer is not None and not self._committer.done():
            with contextlib.suppress(Exception):
                await self._committer
        if self._reader is not None:
            await self._reader.close()
            self._reader = None
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def ping(self) -> bool:
        try:
            await self._all("SELECT 1")
        except (sqlite3.Error, StoreClosed, ValueError):
            return False
        return True

    @property
    def _db(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise StoreClosed("the store is not open")
        return self._conn

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[aiosqlite.Connection]:
        """One all-or-nothing write, committed together with the writes queued beside it.

        Group commit: the first write opens a transaction and schedules its COMMIT behind the
        writes already waiting for the lock; each write runs inside a SAVEPOINT, so a failing
        one rolls back alone. A caller returns only after the COMMIT (synchronous=FULL), so
        what it wrote is on disk before it acts on it.
        """
        async with self._lock:
            db = self._db
            if self._batch is None:
                await db.execute("BEGIN IMMEDIATE")
                self._batch = asyncio.get_running_loop().create_future()
                self._committer = asyncio.create_task(self._commit(self._batch))
            batch = self._batch
            await db.execute("SAVEPOINT op")
            try:
                yield db
            except BaseException:
                await db.execute("ROLLBACK TO op")
                await db.execute("RELEASE op")
                raise
            await db.execute("RELEASE op")
        await asyncio.shield(batch)

    async def _commit(self, batch: asyncio.Future[None]) -> None:
        await asyncio.sleep(0)  # let the writes that are about to queue join this batch
        async with self._lock:
            self._batch = None
            try:
                await self._db.execute("COMMIT")
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    await self._db.execute("ROLLBACK")
                batch.set_exception(StoreError(f"commit failed: {exc}"))
                batch.exception()  # mark retrieved: every writer in the batch re-raises it
                return
            batch.set_result(None)

    async def _one(self, sql: str, args: Sequence[object] = ()) -> Row | None:
        rows = await self._all(sql, args)
        return rows[0] if rows else None

    async def _all(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        # One trip to the reader's thread per read: under load every trip waits a loop turn.
        if self._reader is None:
            raise StoreClosed("the store is not open")
        return [tuple(r) for r in await self._reader.execute_fetchall(sql, args)]

    # -- inbox -----------------------------------------------------------------------------
    async def add_inbox(self, platform: str, dedup_id: str, chat_key: str, body: str) -> int | None:
        async with self._tx() as db:
            cur = await db.execute(
                "INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at) "
                "VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING",
                (platform, dedup_id, chat_key, body, time.time()),
            )
            return cur.lastrowid if cur.rowcount == 1 else None

    async def inbox_for(self, chat_key: str, limit: int = 100) -> list[InboxRow]:
        rows = await self._all(
            "SELECT id, platform, dedup_id, chat_key, body, received_at FROM inbox "
            "WHERE chat_key = ? AND status = 'pending' ORDER BY id LIMIT ?",
            (chat_key, limit),
        )
        return [InboxRow(*r) for r in rows]

    async def chats_with_inbox(self) -> list[str]:
        rows = await self._all("SELECT DISTINCT chat_key FROM inbox WHERE status = 'pending'")
        return [r[0] for r in rows]

    async def finish_inbox(self, inbox_id: int, *, drop_earlier: bool = False) -> None:
        async with self._tx() as db:
            if drop_earlier:  # /cancel and /new also discard what was queued before them
                await db.execute(
                    "UPDATE inbox SET status = 'done' WHERE status = 'pending' AND id < ? "
                    "AND chat_key = (SELECT chat_key FROM inbox WHERE id = ?)",
                    (inbox_id, inbox_id),
                )
            await db.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))

    async def remember_location(self, chat_key: str, location: str, lang: str) -> None:
        now = time.time()
        async with self._tx() as db:
            cur = await db.execute(
                "UPDATE sessions SET location = ?, updated_at = ? WHERE chat_key = ? AND closed = 0",
                (location, now, chat_key),
            )
            if cur.rowcount == 0:
                await db.execute(
                    "INSERT INTO sessions (id, chat_key, state, lang, location, created_at, updated_at) "
                    "VALUES (?, ?, 'idle', ?, ?, ?, ?)",
                    (uuid.uuid4().hex, chat_key, lang, location, now, now),
                )

    # -- sessions --------------------------------------------------------------------------
    async def get_session(self, chat_key: str) -> SessionRow | None:
        row = await self._one(f"SELECT {_SESSION_COLS} FROM sessions WHERE chat_key = ? AND closed = 0", (chat_key,))
        return SessionRow(*row) if row else None

    async def start_turn(self, turn: TurnStart) -> SessionRow:
        now = time.time()
        async with self._tx() as db:
            found = await db.execute_fetchall(
                f"SELECT {_SESSION_COLS} FROM sessions WHERE chat_key = ? AND closed = 0", (turn.chat_key,)
            )
            row = next(iter(found), None)
            if row is None:
                sid = uuid.uuid4().hex
                await db.execute(
                    "INSERT INTO sessions (id, chat_key, state, lang, asker_id, asker_name, run_no, run_steps, request, "
                    "location, created_at, updated_at, run_started_at) VALUES (?, ?, 'running', ?, ?, ?, 1, 0, ?, ?, ?, ?, ?)",
                    (sid, turn.chat_key, turn.lang, turn.asker_id, turn.asker_name, turn.request, turn.location, now, now, now),
                )
            else:
                sid = row[0]
                await db.execute(
                    "UPDATE sessions SET state = 'running', lang = ?, asker_id = ?, asker_name = ?, run_no = run_no + 1, "
                    "run_steps = 0, request = ?, location = COALESCE(?, location), updated_at = ?, run_started_at = ? "
                    "WHERE id = ?",
                    (turn.lang, turn.asker_id, turn.asker_name, turn.request, turn.location, now, now, sid),
                )
            await _append(db, sid, [turn.message])
            await db.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (turn.inbox_id,))
            fresh = next(iter(await db.execute_fetchall(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (sid,))), None)
        assert fresh is not None
        return SessionRow(*fresh)

    async def load_messages(self, session_id: str) -> list[Message]:
        rows = await self._all("SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
        return [Message.model_validate_json(r[0]) for r in rows]

    async def append(self, session_id: str, messages: Sequence[Message], *, step: int) -> None:
        async with self._tx() as db:
            await _append(db, session_id, messages)
            await db.execute("UPDATE sessions SET run_steps = ? WHERE id = ?", (step, session_id))

    async def pause(self, session_id: str, messages: Sequence[Message], question: QuestionRow, *, step: int) -> None:
        async with self._tx() as db:
            await _append(db, session_id, messages)
            await db.execute(
                f"INSERT OR REPLACE INTO questions ({_QUESTION_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 'waiting')",
                (session_id, question.tool_call_id, question.question, json.dumps(list(question.options), ensure_ascii=False),
                 question.asker_id, question.asked_at, question.deadline),
            )
            await db.execute(
                "UPDATE sessions SET state = 'waiting', run_steps = ?, updated_at = ? WHERE id = ?",
                (step, time.time(), session_id),
            )

    async def finish_run(
        self, session_id: str, messages: Sequence[Message], *, outbox_kind: str | None, outbox_body: str | None
    ) -> int | None:
        async with self._tx() as db:
            await _append(db, session_id, messages)
            await db.execute("UPDATE sessions SET state = 'idle', updated_at = ? WHERE id = ?", (time.time(), session_id))
            if outbox_kind is None or outbox_body is None:
                return None
            row = next(iter(await db.execute_fetchall("SELECT chat_key FROM sessions WHERE id = ?", (session_id,))), None)
            cur2 = await db.execute(
                "INSERT INTO outbox (session_id, chat_key, kind, body, status, created_at) VALUES (?, ?, ?, ?, 'pending', ?)",
                (session_id, row[0] if row else "", outbox_kind, outbox_body, time.time()),
            )
            return cur2.lastrowid

    async def interrupt(self, session_id: str, fillers: Sequence[Message], *, close: bool) -> None:
        async with self._tx() as db:
            await _append(db, session_id, fillers)
            await db.execute("UPDATE questions SET status = 'cancelled' WHERE session_id = ? AND status = 'waiting'", (session_id,))
            await db.execute(
                "UPDATE sessions SET state = 'idle', closed = ?, updated_at = ? WHERE id = ?",
                (1 if close else 0, time.time(), session_id),
            )

    async def close_session(self, chat_key: str) -> None:
        async with self._tx() as db:
            await db.execute("UPDATE sessions SET closed = 1, state = 'idle' WHERE chat_key = ? AND closed = 0", (chat_key,))

    async def add_usage(self, session_id: str, prompt: int, completion: int, calls: int) -> None:
        if not (prompt or completion or calls):
            return
        async with self._tx() as db:
            await db.execute(
                "UPDATE sessions SET prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, "
                "llm_calls = llm_calls + ? WHERE id = ?",
                (prompt, completion, calls, session_id),
            )

    async def running_sessions(self) -> list[SessionRow]:
        rows = await self._all(f"SELECT {_SESSION_COLS} FROM sessions WHERE state = 'running' AND closed = 0")
        return [SessionRow(*r) for r in rows]

    # -- questions -------------------------------------------------------------------------
    async def get_question(self, session_id: str) -> QuestionRow | None:
        row = await self._one(
            f"SELECT {_QUESTION_COLS} FROM questions WHERE session_id = ? AND status = 'waiting' ORDER BY asked_at LIMIT 1",
            (session_id,),
        )
        return _question(row) if row else None

    async def question_for_chat(self, chat_key: str) -> QuestionRow | None:
        row = await self._one(
            f"SELECT {', '.join('q.' + c.strip() for c in _QUESTION_COLS.split(','))} FROM questions q "
            "JOIN sessions s ON s.id = q.session_id "
            "WHERE s.chat_key = ? AND s.closed = 0 AND s.state = 'waiting' AND q.status = 'waiting' "
            "ORDER BY q.asked_at LIMIT 1",
            (chat_key,),
        )
        return _question(row) if row else None

    async def set_question_posted(self, session_id: str, tool_call_id: str, message_id: str) -> None:
        async with self._tx() as db:
            await db.execute(
                "UPDATE questions SET posted_message_id = ? WHERE session_id = ? AND tool_call_id = ?",
                (message_id, session_id, tool_call_id),
            )

    async def resolve_question(
        self, session_id: str, tool_call_id: str, answer: Message, *, status: str, inbox_id: int | None
    ) -> bool:
        async with self._tx() as db:
            cur = await db.execute(
                "UPDATE questions SET status = ? WHERE session_id = ? AND tool_call_id = ? AND status = 'waiting'",
                (status, session_id, tool_call_id),
            )
            if cur.rowcount != 1:
                return False
            await _append(db, session_id, [answer])
            await db.execute("UPDATE sessions SET state = 'running', updated_at = ? WHERE id = ?", (time.time(), session_id))
            if inbox_id is not None:
                await db.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
            return True

    async def waiting_questions(self) -> list[QuestionRow]:
        rows = await self._all(f"SELECT {_QUESTION_COLS} FROM questions WHERE status = 'waiting'")
        return [_question(r) for r in rows]

    async def due_questions(self, now: float) -> list[QuestionRow]:
        rows = await self._all(
            f"SELECT {_QUESTION_COLS} FROM questions WHERE status = 'waiting' AND deadline <= ? ORDER BY deadline", (now,)
        )
        return [_question(r) for r in rows]

    async def next_deadline(self) -> float | None:
        row = await self._one("SELECT MIN(deadline) FROM questions WHERE status = 'waiting'")
        return float(row[0]) if row and row[0] is not None else None

    # -- outbox ----------------------------------------------------------------------------
    async def pending_outbox(self) -> list[OutboxRow]:
        rows = await self._all(
            "SELECT id, session_id, chat_key, kind, body, created_at FROM outbox WHERE status = 'pending' ORDER BY id"
        )
        return [OutboxRow(*r) for r in rows]

    async def outbox_sent(self, outbox_id: int) -> None:
        async with self._tx() as db:
            await db.execute("UPDATE outbox SET status = 'sent' WHERE id = ?", (outbox_id,))

    async def session_by_id(self, session_id: str) -> SessionRow | None:
        row = await self._one(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,))
        return SessionRow(*row) if row else None


async def _append(db: aiosqlite.Connection, session_id: str, messages: Sequence[Message]) -> None:
    if not messages:
        return
    # One statement for the batch: each row takes the next sequence number of its session.
    await db.executemany(
        "INSERT INTO messages (session_id, seq, body) "
        "SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM messages WHERE session_id = ?",
        [(session_id, m.model_dump_json(exclude_none=True), session_id) for m in messages],
    )


def _question(row: Sequence[object]) -> QuestionRow:
    values = list(row)
    values[3] = tuple(json.loads(str(values[3])))
    return QuestionRow(*values)  # type: ignore[arg-type]


def _migrate_file(path: str, migrations: list[Migration]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        apply_migrations(conn, migrations)
    finally:
        conn.close()

