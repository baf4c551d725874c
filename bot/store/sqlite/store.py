"""SqliteStore: the Store protocol on SQLite (WAL, synchronous=FULL, one writer).

Its reads and the records of its writes are written once for both databases (bot.store.reads,
bot.store.writes); this class gives them SQLite's two primitives:

- `_write(name, record)`: the function of that name (bot.store.sqlite.writes, run_writes) on
  the GroupCommitWriter (one thread, one connection, grouped commits), returning once committed;
- `_rows(sql, ...)`: the SqliteReader's read-only connections: point reads inline, scans on a
  thread of their own, so they never wait for a commit and see only committed data.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bot.store.errors import StoreClosed
from bot.store.migrate import MIGRATIONS_DIR, Migration, apply_migrations, discover
from bot.store.reads import CHAT_QUESTIONS, OPEN_SESSION, PENDING_INBOX, Row, StoreReads
from bot.store.rows import ChatView, InboxRow, QuestionRow, SessionRow, loaded
from bot.store.sqlite import run_writes, suggestions, writes
from bot.store.sqlite.reader import SqliteReader, in_snapshot
from bot.store.sqlite.writer import GroupCommitWriter
from bot.store.writes import Record, StoreWrites

_WRITES: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (*writes.WRITES, *run_writes.WRITES,
                                                                     *suggestions.WRITES)}
_PLACEHOLDER = re.compile(r"\$(\d+)")


def sqlite_sql(sql: str) -> str:
    """A query of bot.store.reads as SQLite takes it: `$1` -> `?1` (numbered, so one may repeat)."""
    return _PLACEHOLDER.sub(r"?\1", sql)


_VIEW_INBOX, _VIEW_SESSION, _VIEW_QUESTIONS = (sqlite_sql(q) for q in (PENDING_INBOX, OPEN_SESSION, CHAT_QUESTIONS))


class SqliteStore(StoreReads, StoreWrites):
    def __init__(self, path: Path | str, *, migrations_dir: Path = MIGRATIONS_DIR) -> None:
        self.path = Path(path)
        self._migrations_dir = migrations_dir
        self._writer = GroupCommitWriter(str(self.path))
        self._reader = SqliteReader(str(self.path))
        self._sql: dict[str, str] = {}  # each query as SQLite takes it, translated once

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The migration runner is synchronous: run it on its own connection before serving.
        await asyncio.to_thread(_migrate_file, str(self.path), discover(self._migrations_dir))
        await self._writer.open()
        await self._reader.open()

    async def close(self) -> None:
        await self._writer.close()
        await self._reader.close()

    async def ping(self) -> bool:
        try:
            await self._rows("SELECT 1")
        except (sqlite3.Error, StoreClosed, ValueError):
            return False
        return True

    # -- the two primitives --------------------------------------------------------------------
    async def _rows(self, sql: str, *args: object, scan: bool = False) -> list[Row]:
        """A point read (bounded by one chat or one id) inline, a scan on the reader thread
        (bot.store.sqlite.reader)."""
        query = self._sql.get(sql)
        if query is None:
            query = self._sql[sql] = sqlite_sql(sql)
        if scan:
            return await self._reader.scan(query, args)
        return self._reader.point_all(query, args)

    async def _write(self, name: str, record: Record, *, fenced: bool = True) -> Any:
        # one process serves every chat: nothing is fenced
        return await self._writer.write(partial(_WRITES[name], **record))

    # -- what the two databases read differently -----------------------------------------------
    async def chat_view(self, chat_key: str, limit: int = 100) -> ChatView:
        rows, session, questions = self._reader.point(
            partial(in_snapshot, fn=partial(_chat_view, chat_key=chat_key, limit=limit)))
        return ChatView(rows, session, questions)


def _chat_view(conn: sqlite3.Connection, chat_key: str, limit: int
               ) -> tuple[list[InboxRow], SessionRow | None, list[QuestionRow]]:
    rows = [loaded(InboxRow, r) for r in conn.execute(_VIEW_INBOX, (chat_key, limit))]
    found = conn.execute(_VIEW_SESSION, (chat_key,)).fetchone()
    session = loaded(SessionRow, found) if found else None
    asking = session is not None and session.state == "asking"
    questions = [loaded(QuestionRow, r) for r in conn.execute(_VIEW_QUESTIONS, (chat_key,))] if asking else []
    return rows, session, questions


def _migrate_file(path: str, migrations: list[Migration]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        apply_migrations(conn, migrations)
    finally:
        conn.close()
