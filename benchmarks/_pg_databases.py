"""Throwaway PostgreSQL databases for the benchmarks (the machine's server, as in the tests).

    async with bench_database("overhead") as url:   # created from template0, dropped afterwards
        ...

BENCH_PG_ADMIN_URL names a database to connect to with the right to CREATE DATABASE (default
postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg

ADMIN_URL = os.environ.get("BENCH_PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


@contextlib.asynccontextmanager
async def bench_database(label: str) -> AsyncIterator[str]:
    name = f"bench_{label}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(ADMIN_URL, timeout=10)
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    finally:
        await admin.close()
    try:
        yield urlunsplit(urlsplit(ADMIN_URL)._replace(path=f"/{name}"))
    finally:
        admin = await asyncpg.connect(ADMIN_URL, timeout=10)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
