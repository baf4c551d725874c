"""asyncpg or psycopg 3 (+ psycopg-pool) for the PostgreSQL store: the measurement behind the choice.

Both drivers run the same write, the shape of the store's most frequent one (`append_step`: in
one transaction lock the session row, insert two message rows from an array, update the
session), on their own fresh database on the machine's PostgreSQL:

  single    one writer, N writes one after another: per-write latency (p50, p99)
  burst     50 tasks at once, each writing its own session W times, through a pool of
            POOL_MAX connections (the store's default): wall time, writes/s, p50/p99 per write
  read      one reader, N primary-key reads one after another: per-read latency

psycopg runs twice: plain (one round trip per statement, as asyncpg does) and in pipeline
mode (the statements of a transaction sent together, one round trip to COMMIT).

    python benchmarks/bench_pg_drivers.py [--writes 500] [--burst-writes 40] [--rounds 3]

The admin URL (a database it can CREATE DATABASE from) is BOT_TEST_PG_URL, default
postgresql://postgres@127.0.0.1:5432/postgres. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402
import psycopg  # noqa: E402
from psycopg_pool import AsyncConnectionPool  # noqa: E402

ADMIN_URL = os.environ.get("BOT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
POOL_MAX = 20  # bot.store.postgres.store.POOL_MAX
CONCURRENCY = 50
SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, run_steps INTEGER NOT NULL DEFAULT 0, updated_at DOUBLE PRECISION NOT NULL);
CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq));
"""
LOCK = "SELECT 1 FROM sessions WHERE id = {p1} FOR UPDATE"
INSERT = (
    "INSERT INTO messages (session_id, seq, body) "
    "SELECT {p1}, base.n + u.ord, u.body FROM unnest({p2}::text[]) WITH ORDINALITY AS u(body, ord), "
    "(SELECT COALESCE(MAX(seq), 0) AS n FROM messages WHERE session_id = {p1}) AS base"
)
UPDATE = "UPDATE sessions SET run_steps = run_steps + 1, updated_at = {p2} WHERE id = {p1}"
READ = "SELECT id, run_steps, updated_at FROM sessions WHERE id = {p1}"
BODIES = ['{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":'
          '{"name":"train_search","arguments":"{}"}}]}', '{"role":"tool","content":"' + "x" * 400 + '"}']


def _asyncpg(sql: str) -> str:
    return sql.format(p1="$1", p2="$2")


def _psycopg(sql: str) -> str:
    return sql.format(p1="%(a)s", p2="%(b)s")


def _url(dbname: str) -> str:
    base, _, _ = ADMIN_URL.rpartition("/")
    return f"{base}/{dbname}"


async def _create_db() -> str:
    name = f"bench_drivers_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(ADMIN_URL)
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    finally:
        await admin.close()
    conn = await asyncpg.connect(_url(name))
    try:
        await conn.execute(SCHEMA)
        await conn.executemany("INSERT INTO sessions (id, updated_at) VALUES ($1, 0)",
                               [(f"s{i}",) for i in range(CONCURRENCY + 1)])
    finally:
        await conn.close()
    return name


async def _drop_db(name: str) -> None:
    admin = await asyncpg.connect(ADMIN_URL)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def _ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 3), "p99_ms": round(p99 * 1000, 3)}


# one write / one read per driver, on a connection taken from the pool for that write

Op = Callable[[str], Awaitable[Any]]


def asyncpg_ops(pool: asyncpg.Pool) -> tuple[Op, Op]:
    lock, insert, update, read = _asyncpg(LOCK), _asyncpg(INSERT), _asyncpg(UPDATE), _asyncpg(READ)

    async def write(sid: str) -> None:
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute(lock, sid)
            await conn.execute(insert, sid, BODIES)
            await conn.execute(update, sid, time.time())

    async def get(sid: str) -> Any:
        return await pool.fetchrow(read, sid)

    return write, get


def psycopg_ops(pool: AsyncConnectionPool, *, pipeline: bool) -> tuple[Op, Op]:
    lock, insert, update, read = _psycopg(LOCK), _psycopg(INSERT), _psycopg(UPDATE), _psycopg(READ)

    async def write(sid: str) -> None:
        async with pool.connection() as conn:
            if pipeline:
                async with conn.pipeline(), conn.transaction():
                    await conn.execute(lock, {"a": sid})
                    await conn.execute(insert, {"a": sid, "b": BODIES})
                    await conn.execute(update, {"a": sid, "b": time.time()})
            else:
                async with conn.transaction():
                    await conn.execute(lock, {"a": sid})
                    await conn.execute(insert, {"a": sid, "b": BODIES})
                    await conn.execute(update, {"a": sid, "b": time.time()})

    async def get(sid: str) -> Any:
        async with pool.connection() as conn:
            cur = await conn.execute(read, {"a": sid})
            return await cur.fetchone()

    return write, get


async def measure(write: Op, get: Op, writes: int, burst_writes: int) -> dict[str, Any]:
    for _ in range(50):  # warm: connections open, statements prepared
        await write("s0")
        await get("s0")
    single = []
    for _ in range(writes):
        t0 = time.perf_counter()
        await write("s0")
        single.append(time.perf_counter() - t0)
    reads = []
    for _ in range(writes):
        t0 = time.perf_counter()
        await get("s0")
        reads.append(time.perf_counter() - t0)
    burst: list[float] = []

    async def chat(i: int) -> None:
        for _ in range(burst_writes):
            t0 = time.perf_counter()
            await write(f"s{i + 1}")
            burst.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(chat(i) for i in range(CONCURRENCY)))
    wall = time.perf_counter() - t0
    return {
        "single_write": _ms(single),
        "read": _ms(reads),
        "burst50": {**_ms(burst), "wall_s": round(wall, 3), "writes_per_s": round(len(burst) / wall, 1)},
    }


def _best(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    if old is None:
        return new
    out: dict[str, Any] = {}
    for part, figures in new.items():
        out[part] = {k: (max if k == "writes_per_s" else min)(v, old[part][k]) for k, v in figures.items()}
    return out


async def run_asyncpg(writes: int, burst_writes: int) -> dict[str, Any]:
    name = await _create_db()
    try:
        pool = await asyncpg.create_pool(_url(name), min_size=2, max_size=POOL_MAX)
        try:
            return await measure(*asyncpg_ops(pool), writes, burst_writes)
        finally:
            await pool.close()
    finally:
        await _drop_db(name)


async def run_psycopg(writes: int, burst_writes: int, *, pipeline: bool) -> dict[str, Any]:
    name = await _create_db()
    try:
        pool = AsyncConnectionPool(_url(name), min_size=2, max_size=POOL_MAX, open=False)
        await pool.open(wait=True)
        try:
            return await measure(*psycopg_ops(pool, pipeline=pipeline), writes, burst_writes)
        finally:
            await pool.close()
    finally:
        await _drop_db(name)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--burst-writes", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, Any] = {}
    # rounds alternate between the drivers so that background load hits all alike; each figure
    # is the best of the rounds (the least disturbed one)
    for _ in range(args.rounds):
        for label, run in (
            ("asyncpg", lambda: run_asyncpg(args.writes, args.burst_writes)),
            ("psycopg", lambda: run_psycopg(args.writes, args.burst_writes, pipeline=False)),
            ("psycopg_pipeline", lambda: run_psycopg(args.writes, args.burst_writes, pipeline=True)),
        ):
            results[label] = _best(results.get(label), await run())
    a, p = results["asyncpg"], min((results["psycopg"], results["psycopg_pipeline"]),
                                   key=lambda r: r["single_write"]["p50_ms"])
    out = {
        "bench": "pg_drivers",
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "pool_max": POOL_MAX,
        "concurrency": CONCURRENCY,
        "writes": args.writes,
        "burst_writes_per_task": args.burst_writes,
        "asyncpg_write_p50_ms": a["single_write"]["p50_ms"],
        "psycopg_write_p50_ms": p["single_write"]["p50_ms"],
        "asyncpg_burst_writes_per_s": a["burst50"]["writes_per_s"],
        "psycopg_burst_writes_per_s": max(results["psycopg"]["burst50"]["writes_per_s"],
                                          results["psycopg_pipeline"]["burst50"]["writes_per_s"]),
        "drivers": results,
        "postgres": await _server_version(),
        "asyncpg_version": asyncpg.__version__,
        "psycopg_version": psycopg.__version__,
        "ok": True,
    }
    print(json.dumps(out))


async def _server_version() -> str:
    conn = await asyncpg.connect(ADMIN_URL)
    try:
        return str(await conn.fetchval("SHOW server_version"))
    finally:
        await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
