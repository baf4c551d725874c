"""A fresh PostgreSQL database per test, on the machine's server.

The server is the one .ci/run makes sure is up (PostgreSQL 15 on 127.0.0.1:5432, trust auth).
BOT_TEST_PG_URL names a database to connect to with the right to CREATE DATABASE (default
postgresql://postgres@127.0.0.1:5432/postgres). Each test gets `bot_test_<pid>_<random>`,
dropped after it; databases left by a test process that died are dropped by the next run.

PostgreSQL tests never skip silently: when the server cannot be reached they fail, naming what
to start. A developer without PostgreSQL may set BOT_TEST_WITHOUT_POSTGRES=1 to skip them
instead (reported as skipped, with the reason); CI never sets it.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

ADMIN_URL = os.environ.get("BOT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
OPT_OUT = "BOT_TEST_WITHOUT_POSTGRES"
PREFIX = "bot_test_"
_swept = False


def url_for(dbname: str) -> str:
    return urlunsplit(urlsplit(ADMIN_URL)._replace(path=f"/{dbname}"))


async def _admin() -> asyncpg.Connection:
    try:
        return await asyncpg.connect(ADMIN_URL, timeout=5)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        reason = f"{type(exc).__name__}: {exc}"
    message = (
        f"PostgreSQL is not reachable at {ADMIN_URL} ({reason}). "
        "These tests need it: start it with "
        "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` (`.ci/run` does), "
        "or point BOT_TEST_PG_URL at a server where you may CREATE DATABASE. "
        f"To skip them on purpose, set {OPT_OUT}=1 (CI never does)."
    )
    if os.environ.get(OPT_OUT):
        pytest.skip(f"{OPT_OUT} is set: {message}")
    pytest.fail(message, pytrace=False)


async def _sweep_leftovers(admin: asyncpg.Connection) -> None:
    """Drop the databases of earlier test processes that are gone (killed mid-test)."""
    names = await admin.fetch("SELECT datname FROM pg_database WHERE datname LIKE $1", PREFIX + "%")
    for (name,) in names:
        try:
            pid = int(name[len(PREFIX):].split("_", 1)[0])
        except ValueError:
            continue
        if pid == os.getpid() or _alive(pid):
            continue
        with contextlib.suppress(asyncpg.PostgresError):
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.asynccontextmanager
async def fresh_database() -> AsyncIterator[str]:
    """A new, empty database for one test; yields its URL and drops it afterwards."""
    global _swept
    name = f"{PREFIX}{os.getpid()}_{uuid.uuid4().hex[:10]}"
    admin = await _admin()
    try:
        if not _swept:
            _swept = True
            await _sweep_leftovers(admin)
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    finally:
        await admin.close()
    try:
        yield url_for(name)
    finally:
        admin = await _admin()
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
