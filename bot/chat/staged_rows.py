"""StagedRows: inbox rows this process handed to a chat's actor before their commit.

SessionManager.submit stores a message with Store.stage_inbox and hands the row to the chat's
actor at once, with the commit still going on (on SQLite the row has its id as soon as the
writer ran it). The actor may start the message's run meanwhile; everything stored or sent
because of the row waits for the commit (`gate`; the actor's `_run_behind` begins the write
that starts a run through `after`). A row whose commit failed is
forgotten: it was never stored, and its sender was told so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from bot.store.base import InboxRow

T = TypeVar("T")
Staged = tuple[InboxRow, "asyncio.Future[Any]"]  # a row just written, and its commit


class StagedRows:
    def __init__(self) -> None:
        self._rows: dict[int, Staged] = {}

    def add(self, row: InboxRow, committed: asyncio.Future[Any]) -> None:
        self._rows[row.id] = (row, committed)

    def merge(self, rows: list[InboxRow], limit: int = 100) -> list[InboxRow]:
        """The stored rows, and after them (their ids are newer) the staged ones not yet visible.
        A full page may leave out stored rows older than a staged one: it then waits its turn."""
        for inbox_id in [i for i in self._rows if self.never_stored(i)]:
            del self._rows[inbox_id]
        if not self._rows or len(rows) >= limit:
            return rows
        for inbox_id in {r.id for r in rows}.intersection(self._rows):
            del self._rows[inbox_id]  # committed and read: an ordinary row now
        return [*rows, *sorted((row for row, _ in self._rows.values()), key=lambda r: r.id)]

    def gate(self, row: InboxRow) -> asyncio.Future[Any] | None:
        """The commit a staged row is still waiting for, else None."""
        staged = self._rows.get(row.id)
        return None if staged is None or staged[1].done() else staged[1]

    def never_stored(self, inbox_id: int) -> bool:
        """The row's commit failed (or was given up): there is nothing to apply or retry."""
        staged = self._rows.get(inbox_id)
        if staged is None or not staged[1].done():
            return False
        return staged[1].cancelled() or staged[1].exception() is not None

    def done(self, inbox_id: int) -> None:
        self._rows.pop(inbox_id, None)


async def after(gate: asyncio.Future[Any] | None, write: Coroutine[Any, Any, T]) -> T:
    """`write`, begun only once `gate` (the commit of the row it finishes) is done; closed
    unbegun when that commit fails."""
    if gate is not None:
        try:
            await asyncio.shield(gate)
        except BaseException:
            write.close()
            raise
    return await write
