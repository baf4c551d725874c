"""What only the PostgreSQL store has: leases with fencing, LISTEN/NOTIFY wake-ups, migrating an
empty database from several processes at once, its session settings, and its errors.

Two PostgresStore objects on one database stand for two bot processes. Each test has its own
fresh database (the `pg_url` fixture, tests/pg_support.py), which fails when PostgreSQL is down.
"""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import AsyncIterator
from functools import partial
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from agent_core.schema import Message
from bot.store import pg_leases
from bot.store.base import LeaseLost, StoreUnavailable, TurnStart
from bot.store.pg_leases import Lease
from bot.store.pg_notify import INBOX_CHANNEL
from bot.store.postgres import PostgresStore

KEY = "test:chat1:"


async def opened(url: str, **kwargs: float) -> PostgresStore:
    store = PostgresStore(url, pool_min=1, pool_max=4, **kwargs)  # type: ignore[arg-type]
    await store.open()
    return store


@pytest.fixture
async def two(pg_url: str) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    """Two processes' stores on one database."""
    a, b = await opened(pg_url), await opened(pg_url)
    yield a, b
    await a.close()
    await b.close()


async def session_of(store: PostgresStore, key: str = KEY) -> str:
    inbox = await store.add_inbox("test", "1", key, "{}")
    session = await store.start_turn(TurnStart(key, inbox or 0, Message.user("hi"), "en", "u1", "Ann", "hi", None))
    return session.id


# -- leases and fencing --------------------------------------------------------------------


async def test_a_holder_whose_lease_expired_and_was_taken_over_cannot_write(two):
    a, b = two
    sid = await session_of(a)
    lease_a = await a.acquire_lease(KEY, "proc-a", ttl_s=0.5)
    assert lease_a is not None
    with a.fenced(lease_a):
        await a.append(sid, [Message.user("a1")], step=1)  # the holder writes
    assert await b.acquire_lease(KEY, "proc-b", ttl_s=5) is None  # live: not granted

    await asyncio.sleep(0.7)  # a stalls past its lease (GC, SIGSTOP, a frozen VM) ...
    lease_b = await b.acquire_lease(KEY, "proc-b", ttl_s=5)  # ... and b takes the chat over
    assert lease_b is not None and lease_b.fence > lease_a.fence

    with a.fenced(lease_a), pytest.raises(LeaseLost) as lost:  # a wakes up late: refused
        await a.append(sid, [Message.user("a2, too late")], step=2)
    err = lost.value
    assert (err.chat_key, err.fence, err.current_fence, err.current_owner) == (KEY, lease_a.fence, lease_b.fence, "proc-b")
    with pytest.raises(LeaseLost):  # the explicit form, and any write the protocol has
        await a.write(partial(pg_leases.current, chat_key=KEY), fence=lease_a)
    with a.fenced(lease_a), pytest.raises(LeaseLost):
        await a.close_session(KEY)
    with pytest.raises(LeaseLost):
        await a.renew_lease(lease_a, ttl_s=5)
    assert not await a.release_lease(lease_a)  # harmless, and b keeps the chat

    with b.fenced(lease_b):
        await b.append(sid, [Message.user("b1")], step=2)
    assert [m.content for m in await b.load_messages(sid)] == ["hi", "a1", "b1"]  # nothing of a's late writes
    assert await b.current_lease(KEY) == lease_b
    assert (await b.get_session(KEY)) is not None  # a's close_session was refused too


async def test_a_lease_nobody_took_over_still_writes_and_renews_after_expiry(two):
    a, _ = two
    sid = await session_of(a)
    lease = await a.acquire_lease(KEY, "proc-a", ttl_s=0.2)
    assert lease is not None
    await asyncio.sleep(0.3)
    with a.fenced(lease):
        await a.append(sid, [Message.user("late but alone")], step=1)
    renewed = await a.renew_lease(lease, ttl_s=5)
    assert renewed.fence == lease.fence and renewed.expires_at > lease.expires_at
    assert await a.acquire_lease(KEY, "proc-a", ttl_s=5) is None  # held: renew, don't re-acquire


async def test_a_released_lease_fences_its_holder_and_the_next_lease_is_newer(two):
    a, b = two
    sid = await session_of(a)
    first = await a.acquire_lease(KEY, "proc-a", ttl_s=30)
    assert first is not None and await a.release_lease(first)
    assert await a.current_lease(KEY) is None
    with a.fenced(first), pytest.raises(LeaseLost) as lost:
        await a.append(sid, [Message.user("after release")], step=1)
    assert lost.value.current_owner is None
    fences = [first.fence]
    for i in range(5):  # taken and given back, alternately by the two processes
        store, owner = (a, "proc-a") if i % 2 else (b, "proc-b")
        lease = await store.acquire_lease(KEY, owner, ttl_s=30)
        assert lease is not None
        fences.append(lease.fence)
        assert await store.release_lease(lease)
    assert fences == sorted(fences) and len(set(fences)) == len(fences)


async def test_of_many_processes_taking_one_chat_at_once_exactly_one_gets_it(pg_url):
    stores = [await opened(pg_url) for _ in range(6)]
    try:
        leases = await asyncio.gather(*(s.acquire_lease(KEY, f"proc-{i}", ttl_s=5) for i, s in enumerate(stores)))
        assert len([lease for lease in leases if lease is not None]) == 1
    finally:
        for s in stores:
            await s.close()


async def test_a_fenced_write_holds_off_a_takeover_until_it_commits(two):
    """The fence check and the write are one transaction: a takeover that starts in between waits
    for the COMMIT, so the successor sees the write, never the other way round."""
    a, b = two
    sid = await session_of(a)
    lease_a = await a.acquire_lease(KEY, "proc-a", ttl_s=0.3)
    assert lease_a is not None
    checked = asyncio.Event()

    async def slow_write(conn: asyncpg.Connection) -> None:
        checked.set()
        await asyncio.sleep(0.6)  # the lease expires during the write
        await conn.execute("UPDATE sessions SET request = 'written by a' WHERE id = $1", sid)

    writing = asyncio.create_task(a.write(slow_write, fence=lease_a))
    await checked.wait()
    await asyncio.sleep(0.35)
    lease_b = await b.acquire_lease(KEY, "proc-b", ttl_s=5)  # waits for a's COMMIT
    assert writing.done() and writing.exception() is None
    assert lease_b is not None and (await b.session_by_id(sid)).request == "written by a"  # type: ignore[union-attr]


async def test_a_holder_stopped_inside_a_transaction_blocks_a_takeover_only_until_the_idle_timeout(pg_url):
    """idle_in_transaction_session_timeout: the server ends the stopped holder's session and rolls
    its transaction back, so the successor is not held past the lease."""
    a = await opened(pg_url, idle_in_transaction_s=1.0)
    b = await opened(pg_url)
    try:
        sid = await session_of(a)
        lease_a = await a.acquire_lease(KEY, "proc-a", ttl_s=0.2)
        assert lease_a is not None
        checked = asyncio.Event()

        async def stalls(conn: asyncpg.Connection) -> None:
            await conn.execute("UPDATE sessions SET request = 'never committed' WHERE id = $1", sid)
            checked.set()
            await asyncio.sleep(2)  # as if SIGSTOPped mid-transaction
            await conn.execute("SELECT 1")

        stalled = asyncio.create_task(a.write(stalls, fence=lease_a))
        await checked.wait()
        started = time.monotonic()
        await asyncio.sleep(0.3)
        lease_b = await b.acquire_lease(KEY, "proc-b", ttl_s=5)
        waited = time.monotonic() - started
        assert lease_b is not None and waited < 1.8, waited  # the 1 s timeout, not the 2 s stall
        with pytest.raises(StoreUnavailable):  # the holder learns its transaction is gone
            await stalled
        assert (await b.session_by_id(sid)).request == "hi"  # type: ignore[union-attr]
    finally:
        await a.close()
        await b.close()


async def test_inbox_rows_are_stored_by_any_process_whatever_the_fence(two):
    a, b = two
    stale = Lease(KEY, "proc-gone", fence=10**9, expires_at=0.0)
    with b.fenced(stale):  # add_inbox is never fenced: any process accepts an update
        assert await b.add_inbox("test", "9", KEY, "{}") is not None
    assert await a.unowned_chats_with_inbox() == [KEY]
    lease = await a.acquire_lease(KEY, "proc-a", ttl_s=5)
    assert lease is not None and await a.unowned_chats_with_inbox() == []


# -- wake-ups ------------------------------------------------------------------------------


async def test_an_update_stored_anywhere_wakes_the_listener_and_it_relistens_after_a_reconnect(two):
    a, b = two
    woken: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    connects: list[float] = []

    async def on_notify(channel: str, payload: str) -> None:
        await woken.put((channel, payload))

    async def on_connect() -> None:  # where the owner rescans the inbox for missed wake-ups
        connects.append(time.monotonic())

    listener = a.listener([INBOX_CHANNEL], on_notify, on_connect=on_connect, retry_s=0.1, check_s=0.5)
    await listener.start()
    try:
        await b.add_inbox("test", "1", "test:chat7:", "{}")
        assert await asyncio.wait_for(woken.get(), 5) == (INBOX_CHANNEL, "test:chat7:")
        assert await b.add_inbox("test", "1", "test:chat7:", "{}") is None  # a duplicate wakes nobody

        async with asyncio.timeout(5):  # the server drops the listening connection
            killer = await asyncpg.connect(a.url)
            try:
                assert await killer.fetchval("SELECT pg_terminate_backend($1)", listener.backend_pid)
            finally:
                await killer.close()
            while listener.connects < 2 or not listener.connected.is_set():
                await asyncio.sleep(0.05)
        assert len(connects) == 2

        await b.add_inbox("test", "2", "test:chat8:", "{}")
        assert await asyncio.wait_for(woken.get(), 5) == (INBOX_CHANNEL, "test:chat8:")
        assert woken.empty()
    finally:
        await listener.stop()


# -- losing the database -------------------------------------------------------------------


async def test_the_store_serves_again_once_the_server_dropped_its_connections(two):
    a, _ = two
    await asyncio.gather(*(a.add_inbox("test", str(i), KEY, "{}") for i in range(4)))  # the pool is warm
    admin = await asyncpg.connect(a.url)
    try:
        await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    finally:
        await admin.close()
    failures = 0
    async with asyncio.timeout(5):
        while True:  # a write on a connection that is gone is a StoreUnavailable, never a hang
            try:
                await a.add_inbox("test", "after", KEY, "{}")
                break
            except StoreUnavailable as exc:
                assert "BOT_DB_URL" in str(exc)
                failures += 1
                await asyncio.sleep(0.05)
    assert failures <= a.pool_max
    assert await a.ping() and len(await a.inbox_for(KEY)) == 5


# -- opening: migrations, settings, errors -------------------------------------------------


async def test_three_processes_starting_on_an_empty_database_migrate_it_once(pg_url):
    stores = [PostgresStore(pg_url, pool_min=1, pool_max=2) for _ in range(3)]
    await asyncio.gather(*(s.open() for s in stores))
    try:
        conn = await asyncpg.connect(pg_url)
        try:
            versions = [r[0] for r in await conn.fetch("SELECT version FROM schema_version ORDER BY version")]
        finally:
            await conn.close()
        assert versions == [1, 2]
        assert all([await s.ping() for s in stores])
    finally:
        for s in stores:
            await s.close()


async def test_every_connection_ends_a_transaction_left_idle(two):
    a, _ = two
    pool = a._need_pool()
    assert await pool.fetchval("SHOW idle_in_transaction_session_timeout") == "5s"
    assert await pool.fetchval("SHOW application_name") == "travel-bot"
    assert pool.get_max_size() == 4


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_postgres_down_at_start_is_a_store_unavailable_naming_bot_db_url():
    store = PostgresStore(f"postgresql://bot:secret@127.0.0.1:{_closed_port()}/bot")
    with pytest.raises(StoreUnavailable) as err:
        await store.open()
    text = str(err.value)
    assert "BOT_DB_URL=postgresql://bot:***@127.0.0.1:" in text and "Start PostgreSQL" in text
    assert "secret" not in text


async def test_a_missing_database_is_named_too(pg_url):
    store = PostgresStore(pg_url + "_missing")
    with pytest.raises(StoreUnavailable, match="Create that database"):
        await store.open()


def test_bot_db_url_selects_postgres_and_wins_over_bot_db_path(tmp_path):
    from pydantic import ValidationError

    from adapters.runtime import make_store
    from bot.settings import Settings
    from bot.store.sqlite import SqliteStore

    both = Settings(_env_file=None, BOT_DB_URL="postgresql://u@127.0.0.1/x", BOT_DB_PATH=str(tmp_path / "a.db"))  # type: ignore[call-arg]
    assert isinstance(make_store(both), PostgresStore)
    assert isinstance(make_store(Settings(_env_file=None, BOT_DB_PATH=str(tmp_path / "a.db"))), SqliteStore)  # type: ignore[call-arg]
    assert isinstance(make_store(Settings(_env_file=None, BOT_DB_URL="")), SqliteStore)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="postgresql://"):
        Settings(_env_file=None, BOT_DB_URL="mysql://u@h/x")  # type: ignore[call-arg]


async def test_a_role_that_may_not_create_tables_is_told_so(pg_url):
    admin = await asyncpg.connect(pg_url)
    role = f"bot_test_ro_{uuid.uuid4().hex[:8]}"
    try:
        await admin.execute(f"CREATE ROLE {role} LOGIN")
        await admin.execute(f"REVOKE CREATE ON SCHEMA public FROM PUBLIC, {role}")
        parts = urlsplit(pg_url)
        url = urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port or 5432}"))
        with pytest.raises(StoreUnavailable, match="Grant that role CREATE"):
            await PostgresStore(url).open()
    finally:
        await admin.execute(f"DROP OWNED BY {role}")
        await admin.execute(f"DROP ROLE {role}")
        await admin.close()
