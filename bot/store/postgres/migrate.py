"""Apply migrations/postgres/NNNN_name.sql in order, each once, recorded in schema_version.

The PostgreSQL twin of bot.store.migrate (same file naming, same `schema_version` table). It
runs at PostgresStore.open(), into the URL's database as it is (it may be new and empty: no
CREATE DATABASE right is needed, only CREATE on its schema). Several processes may start at
once on an empty database: a session advisory lock lets one of them migrate while the others
wait, then find nothing left to do. Each migration runs in its own transaction (PostgreSQL's
DDL is transactional), so a process killed halfway leaves the database as it was before it.
"""

from __future__ import annotations

import time

import asyncpg

from bot.store.migrate import MIGRATIONS_DIR, Migration, discover

PG_MIGRATIONS_DIR = MIGRATIONS_DIR / "postgres"
MIGRATION_LOCK = 0x74726176656C  # pg_advisory_lock key: one migrator per database at a time

__all__ = ["PG_MIGRATIONS_DIR", "apply_migrations", "discover"]


async def apply_migrations(conn: asyncpg.Connection, migrations: list[Migration]) -> list[int]:
    """Apply what is missing; return the versions applied (none when another process did it)."""
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
        )
        done = {row[0] for row in await conn.fetch("SELECT version FROM schema_version")}
        applied = []
        for migration in migrations:
            if migration.version in done:
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)  # no arguments: the whole script in one go
                await conn.execute(
                    "INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, $3)",
                    migration.version, migration.name, time.time(),
                )
            applied.append(migration.version)
        return applied
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)
