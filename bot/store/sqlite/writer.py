"""GroupCommitWriter: the one SQLite writer, on its own thread, committing writes in groups.

A write is a plain function of the connection. Writes queue up; one flush runs every queued
write in a single transaction on the writer thread (each inside a SAVEPOINT, so a failing write
rolls back alone), then COMMITs once, and only then resolves each writer's future. So a caller
returns after its write is on disk (synchronous=FULL), a batch of N writes costs one fsync and
one hand-off between the event loop and the thread, and nobody waits for a loop turn per SQL
statement. Reads do not come here: they use their own connection (WAL lets them run beside it).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from bot.store.base import StoreClosed, StoreError
from bot.store.sqlite.thread import SqliteThread

T = TypeVar("T")
WRITER_CACHE_KIB = 256
Write = Callable[[sqlite3.Connection], Any]


@dataclass(slots=True)
class _Pending:
    fn: Write
    future: asyncio.Future[Any]  # the outcome, once committed
    executed: asyncio.Future[Any] | None = None  # the outcome as soon as `fn` ran (write_staged)


@dataclass(slots=True)
class _Outcome:
    value: Any = None
    error: BaseException | None = None


class GroupCommitWriter:
    def __init__(self, path: str) -> None:
        self.path = path
        # Writes touch the newest pages only; the OS keeps the file cached anyway. A small
        # page cache keeps the process from growing with the number of stored sessions.
        self._thread = SqliteThread(path, "sqlite-writer", ("journal_mode=WAL", "synchronous=FULL",
                                                            "busy_timeout=5000", f"cache_size=-{WRITER_CACHE_KIB}"))
        self._queue: list[_Pending] = []
        self._flushing: asyncio.Task[None] | None = None
        self.batches = 0  # transactions committed (for metrics and tests: writes per commit)

    async def open(self) -> None:
        await self._thread.open()

    async def close(self) -> None:
        while self._flushing is not None and not self._flushing.done():
            await asyncio.shield(self._flushing)
        await self._thread.close()

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` in a transaction; return once it is committed. `fn` runs on the writer thread."""
        # A cancelled caller cancels only its wait: the write may already be in a batch, and the
        # flush skips futures that are done.
        return await self._enqueue(fn, staged=False)[1]

    def write_staged(self, fn: Callable[[sqlite3.Connection], T]) -> tuple[asyncio.Future[T], asyncio.Future[T]]:
        """Queue `fn`; two futures: its outcome as soon as it ran in its batch (not yet on disk),
        and the same once committed. Whoever acts on the first must not let anything of it be
        seen before the second (a failed COMMIT fails the second only)."""
        executed, committed = self._enqueue(fn, staged=True)
        assert executed is not None
        return executed, committed

    def _enqueue(self, fn: Callable[[sqlite3.Connection], T], *, staged: bool
                 ) -> tuple[asyncio.Future[T] | None, asyncio.Future[T]]:
        if self._thread.conn is None:
            raise StoreClosed("the store is not open")
        loop = asyncio.get_running_loop()
        executed: asyncio.Future[T] | None = loop.create_future() if staged else None
        committed: asyncio.Future[T] = loop.create_future()
        self._queue.append(_Pending(fn, committed, executed))
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush())
        return executed, committed

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # let the writes that are about to queue join this batch
        loop = asyncio.get_running_loop()
        while self._queue:
            batch, self._queue = self._queue, []
            early = None
            if any(p.executed is not None for p in batch):
                def early(outcomes: list[_Outcome], batch: list[_Pending] = batch) -> None:
                    loop.call_soon_threadsafe(_settle, batch, list(outcomes), True)
            try:
                outcomes = await self._thread.run(partial(self._run_batch, fns=[p.fn for p in batch], early=early))
            except asyncio.CancelledError:  # shutting down: the writers are being cancelled too
                for pending in batch:
                    pending.future.cancel()
                    if pending.executed is not None:
                        pending.executed.cancel()
                raise
            except Exception as exc:  # the COMMIT (or the thread) failed: nothing was written
                error = exc if isinstance(exc, StoreError) else StoreError(f"write failed: {exc!r}")
                outcomes = [_Outcome(error=error) for _ in batch]
                _settle(batch, outcomes, True)  # a batch that failed before it ran its writes
            _settle(batch, outcomes, False)

    def _run_batch(self, conn: sqlite3.Connection, fns: list[Write],
                   early: Callable[[list[_Outcome]], None] | None = None) -> list[_Outcome]:
        outcomes: list[_Outcome] = []
        conn.execute("BEGIN IMMEDIATE")
        try:
            for fn in fns:
                conn.execute("SAVEPOINT op")
                try:
                    outcomes.append(_Outcome(value=fn(conn)))
                except Exception as exc:
                    conn.execute("ROLLBACK TO op")
                    outcomes.append(_Outcome(error=exc))
                conn.execute("RELEASE op")
            if early is not None:
                early(outcomes)
            conn.execute("COMMIT")
            self.batches += 1
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return outcomes


def _settle(batch: list[_Pending], outcomes: list[_Outcome], executed: bool) -> None:
    """Each writer learns its outcome: as executed (staged writes only), or as committed."""
    for pending, outcome in zip(batch, outcomes, strict=True):
        future = pending.executed if executed else pending.future
        if future is None or future.done():
            continue
        if outcome.error is not None:
            future.set_exception(outcome.error)
        else:
            future.set_result(outcome.value)
