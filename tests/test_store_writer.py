"""Group commit: writes queued together share one COMMIT; a failing write rolls back alone."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bot.store.sqlite.writer import GroupCommitWriter


@pytest.fixture
async def writer(tmp_path: Path):
    path = tmp_path / "w.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)")
    w = GroupCommitWriter(str(path))
    await w.open()
    yield w, path
    await w.close()


def rows(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT k, v FROM t").fetchall())


async def test_a_failing_write_rolls_back_alone_and_the_others_commit(writer):
    w, path = writer

    def insert(key: str, value: int):
        def fn(conn: sqlite3.Connection) -> int:
            conn.execute("INSERT INTO t VALUES (?, ?)", (key, value))
            if value < 0:
                raise ValueError("refused after writing")
            return value
        return fn

    results = await asyncio.gather(
        w.write(insert("a", 1)), w.write(insert("b", -1)), w.write(insert("c", 3)), w.write(insert("a", 9)),
        return_exceptions=True,
    )
    assert results[0] == 1 and results[2] == 3
    assert isinstance(results[1], ValueError)
    assert isinstance(results[3], sqlite3.IntegrityError)  # the duplicate key, rolled back alone
    assert rows(path) == {"a": 1, "c": 3}


async def test_a_caller_returns_only_after_its_write_is_committed(writer):
    w, path = writer
    await w.write(lambda conn: conn.execute("INSERT INTO t VALUES ('x', 1)"))
    assert rows(path) == {"x": 1}  # visible to another connection: committed


async def test_many_writes_at_once_are_grouped(writer):
    w, path = writer
    before = w.batches

    def insert(i: int):
        return lambda conn: conn.execute("INSERT INTO t VALUES (?, ?)", (f"k{i}", i))

    await asyncio.gather(*(w.write(insert(i)) for i in range(200)))
    assert len(rows(path)) == 200
    assert w.batches - before <= 3  # one fsync for a whole burst, not 200


async def test_a_staged_write_reports_its_outcome_then_its_commit(writer):
    w, path = writer
    executed, committed = w.write_staged(lambda conn: conn.execute("INSERT INTO t VALUES ('s', 5)").lastrowid)
    other = asyncio.ensure_future(w.write(lambda conn: conn.execute("INSERT INTO t VALUES ('o', 6)")))
    rowid = await executed
    assert rowid is not None
    assert await committed == rowid
    await other
    assert rows(path) == {"s": 5, "o": 6}
    failing, failed = w.write_staged(lambda conn: conn.execute("INSERT INTO t VALUES ('s', 7)"))  # duplicate key
    with pytest.raises(sqlite3.IntegrityError):
        await failing
    with pytest.raises(sqlite3.IntegrityError):
        await failed
    assert rows(path) == {"s": 5, "o": 6}
