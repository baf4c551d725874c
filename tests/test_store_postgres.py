"""What only the PostgreSQL store has: leases with fencing, LISTEN/NOTIFY wake-ups, migrating an
empty database from several processes at once, its session settings, and its errors.

Two PostgresStore objects on one database stand for two bot processes. Each test has its own
fresh database (the `pg_url` fixture, tests/pg_support.py), which fails when PostgreSQL is down.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from agent_core.schema import Message
from bot.store import migrate
from bot.store.base import ChatEvent, LeaseLost, QuestionRow, RunUsage, StoreUnavailable, TurnStart
from bot.store.postgres import leases as pg_leases
from bot.store.postgres import migrate as pg_migrate
from bot.store.postgres.connect import LEASES_APPLICATION_NAME
from bot.store.postgres.leases import Lease
from bot.store.postgres.notify import INBOX_CHANNEL
from bot.store.postgres.store import PostgresStore
from tests.store_support import postings_for

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


def question(session_id: str, call_id: str = "call_q") -> QuestionRow:
    now = time.time()
    return QuestionRow(session_id, call_id, "When?", ("Fri", "Sat"), "u1", now, now + 60, None, "waiting")


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


async def test_taking_a_lease_tells_what_the_previous_owner_left(two):
    """One round trip takes the lease and reads, once it is ours, the run left working and the
    rows left to send: the new owner re-drives the one and sends the others (bot.sessions)."""
    a, b = two
    quiet = await a.take_lease("test:other:", "proc-a", ttl_s=30)
    assert quiet is not None and (quiet.working_session, quiet.outbox_pending) == (None, False)
    first = await a.take_lease(KEY, "proc-a", ttl_s=0.2)
    assert first is not None and first.working_session is None
    with a.fenced(first.lease):
        sid = await session_of(a)  # a run starts working, and something is queued ...
        await a.queue_outbox(KEY, sid, "notice", "{}")
    assert await b.take_lease(KEY, "proc-b", ttl_s=5) is None  # (held live: nothing)
    await asyncio.sleep(0.3)  # ... then its owner stalls past the lease
    taken = await b.take_lease(KEY, "proc-b", ttl_s=5)
    assert taken is not None and taken.lease.fence > first.lease.fence
    assert (taken.working_session, taken.outbox_pending) == (sid, True)
    assert await b.current_lease(KEY) == taken.lease


async def test_the_bot_processes_are_counted_by_their_lease_listeners(two):
    a, b = two
    assert await a.bot_processes() == 1  # none listening yet: at least the one asking

    async def ignore(_channel: str, _payload: str) -> None:
        return None

    listeners = [s.listener([INBOX_CHANNEL], ignore, application_name=LEASES_APPLICATION_NAME) for s in (a, b)]
    other = a.listener([INBOX_CHANNEL], ignore)  # the web events' listener is not a process of its own
    for listener in (*listeners, other):
        await listener.start()
    try:
        assert await b.bot_processes() == 2
        await listeners[1].stop()  # a process gone: its connection with it
        assert await a.bot_processes() == 1
    finally:
        await listeners[0].stop()
        await other.stop()


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
    with b.fenced(stale):  # add_inbox and add_events are never fenced: any process accepts an
        assert await b.add_inbox("test", "9", KEY, "{}") is not None  # update, or notices an event
        await b.add_events([ChatEvent(KEY, "expired", "{}", "expired:s:q")])
    assert [r.kind for r in await b.inbox_for(KEY)] == ["message", "expired"]
    assert await a.unowned_chats_with_inbox() == [KEY]
    lease = await a.acquire_lease(KEY, "proc-a", ttl_s=5)
    assert lease is not None and await a.unowned_chats_with_inbox() == []


async def test_every_write_that_changes_a_chat_is_refused_under_a_lease_that_was_taken_over(two):
    """Main's actor protocol grew writes (events, failed rows, outbox attempts and parts): each is
    fenced like the first ones, so a process that lost the chat changes nothing in it."""
    a, b = two
    sid = await session_of(a)
    [asking] = await a.pause(sid, [], asked := [question(sid)], postings=postings_for(asked), step=1)
    other = await a.queue_outbox(KEY, sid, "notice", "{}")
    inbox = await a.add_inbox("test", "2", KEY, "{}") or 0
    lease_a = await a.acquire_lease(KEY, "proc-a", ttl_s=0.2)
    assert lease_a is not None
    await asyncio.sleep(0.3)
    lease_b = await b.acquire_lease(KEY, "proc-b", ttl_s=30)
    assert lease_b is not None
    answer = Message.tool("Fri", tool_call_id="call_q", name="ask_human")
    writes: dict[str, Callable[[], Awaitable[object]]] = {
        "finish_inbox": lambda: a.finish_inbox(inbox, drop_earlier=True),
        "fail_inbox": lambda: a.fail_inbox(inbox, "bad"),
        "remember_location": lambda: a.remember_location(KEY, "{}", "en"),
        "start_turn": lambda: a.start_turn(TurnStart(KEY, inbox, Message.user("x"), "en", "u1", "Ann", "x", None)),
        "append": lambda: a.append(sid, [Message.user("x")], step=2, inbox_done=[inbox]),
        "pause": lambda: a.pause(sid, [], [question(sid, "call_2")], postings=["{}"], step=2, inbox_done=[inbox]),
        "finish_run": lambda: a.finish_run(sid, [], outbox=[("answer", "{}")], inbox_done=[inbox]),
        "interrupt": lambda: a.interrupt(sid, [], close=True, notice="{}"),
        "close_session": lambda: a.close_session(KEY),
        "add_usage": lambda: a.add_usage(RunUsage(sid, 1, "m", 1, 1, 1, 0.5, 1, "paused")),
        "resolve_question": lambda: a.resolve_question(sid, "call_q", answer, status="answered", inbox_id=inbox),
        "queue_outbox": lambda: a.queue_outbox(KEY, sid, "notice", "{}"),
        "outbox_part_sent": lambda: a.outbox_part_sent(other, 1, "m1"),
        "outbox_sent": lambda: a.outbox_sent(asking, 1, "m1"),
        "outbox_attempt_failed": lambda: a.outbox_attempt_failed(other, "timed out"),
        "outbox_failed": lambda: a.outbox_failed(asking, "blocked"),
        "notice_inbox": lambda: a.notice_inbox(inbox, KEY, sid, "{}"),
        "remind": lambda: a.remind(sid, "call_q", "{}", inbox_id=inbox),
        "decide_signoff": lambda: a.decide_signoff("g1", "approved", "u1", inbox_id=inbox, outbox=[("notice", "{}")]),
        "signoff_reminded": lambda: a.signoff_reminded("g1", inbox_id=inbox, outbox=[("notice", "{}")]),
        "add_approver": lambda: a.add_approver("test", "chat1", "u2", "u1"),
    }
    before = (await b.get_session(KEY), await b.get_question(sid), await b.pending_outbox(), await b.inbox_for(KEY),
              await b.load_messages(sid), await b.counts())
    refused = []
    with a.fenced(lease_a):
        for name, write in writes.items():
            with pytest.raises(LeaseLost):
                await write()
            refused.append(name)
    assert refused == list(writes)
    after = (await b.get_session(KEY), await b.get_question(sid), await b.pending_outbox(), await b.inbox_for(KEY),
             await b.load_messages(sid), await b.counts())
    assert after == before


async def test_an_answer_another_process_stored_before_the_posting_was_recorded_answers_it(two):
    """The delivery worker records the watermark just before it calls the platform; the person sees
    the question and answers, another process stores the answer, and only then is the posting
    recorded (a loaded process): the answer is above the watermark, so it answers the question."""
    a, b = two
    sid = await session_of(a)
    [row] = await a.pause(sid, [], asked := [question(sid, "call_w")], postings=postings_for(asked), step=1)
    mark = await a.record_watermark(row)
    answer_id = await b.add_inbox("test", "w-answer", KEY, "{}")
    await a.outbox_sent(row, 1, "m1")  # the recorded watermark, not the newest id now
    posted = await a.get_question(sid)
    assert posted is not None and posted.posted_after == mark
    assert answer_id is not None and answer_id > posted.posted_after


async def test_an_update_stored_while_a_posting_is_recorded_comes_after_its_watermark(pg_url):
    """A person who answers the moment the question appears answers it: outbox_sent is called
    first (the delivery worker, right after the platform took the question), the update just after,
    and they race to the database on two connections. SQLite's single writer keeps call order."""
    store = await opened(pg_url)
    try:
        sid = await session_of(store)
        for i in range(5):
            call_id = f"call_{i}"
            asked = [question(sid, call_id)]
            [row] = await store.pause(sid, [], asked, postings=postings_for(asked), step=i + 1)
            _, answer_id = await asyncio.gather(
                store.outbox_sent(row, 1, f"m{i}"), store.add_inbox("test", f"answer-{i}", KEY, "{}")
            )
            posted = await store.get_question(sid)
            assert posted is not None and posted.tool_call_id == call_id and posted.posted_after is not None
            assert answer_id is not None and answer_id > posted.posted_after
            reply = Message.tool("Fri", tool_call_id=call_id, name="ask_human")
            assert await store.resolve_question(sid, call_id, reply, status="answered", inbox_id=answer_id)
    finally:
        await store.close()


@pytest.mark.empty_database
async def test_the_chat_actor_migration_converts_an_old_database_as_sqlites_does(pg_url, tmp_path: Path):
    """migrations/postgres/0003 and migrations/0004 on the same old rows: states renamed, a posted
    question gets the watermark, one stored but never posted is queued for the delivery worker
    with the body pause() writes (json_build_object here, json_object there)."""
    rows = [
        "INSERT INTO sessions (id, chat_key, state, lang, asker_id, asker_name, created_at, updated_at) VALUES "
        "('s1', 'test:a:', 'waiting', 'zh', 'u1', '小明', 1, 1), ('s2', 'test:b:', 'running', 'en', 'u2', 'Bo', 1, 1), "
        "('s3', 'test:c:', 'waiting', 'en', 'u3', 'Cy', 1, 1)",
        "INSERT INTO questions (session_id, tool_call_id, question, options, asker_id, asked_at, deadline, "
        "posted_message_id, status) VALUES ('s1', 'call_1', '哪天出发？', '[\"周五\", \"周六\"]', 'u1', 5, 99, NULL, "
        "'waiting'), ('s3', 'call_3', 'When?', '[]', 'u3', 6, 99, 'm3', 'waiting')",
        "INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at) VALUES "
        "('test', '1', 'test:a:', '{}', 'done', 1), ('test', '2', 'test:c:', '{}', 'done', 2)",
    ]
    read = [
        "SELECT id, state FROM sessions ORDER BY id",
        "SELECT session_id, posted_after FROM questions ORDER BY session_id",
        "SELECT session_id, chat_key, kind, status, created_at, tool_call_id, attempts, parts_sent FROM outbox",
        "SELECT body FROM outbox",
    ]
    old_sqlite = [m for m in migrate.discover() if m.version < 4]
    lite = sqlite3.connect(tmp_path / "old.sqlite3", isolation_level=None)
    try:
        migrate.apply_migrations(lite, old_sqlite)
        for sql in rows:
            lite.execute(sql)
        migrate.apply_migrations(lite, migrate.discover())
        lite_seen = [[tuple(r) for r in lite.execute(sql)] for sql in read]
    finally:
        lite.close()
    conn = await asyncpg.connect(pg_url)
    try:
        await pg_migrate.apply_migrations(conn, [m for m in pg_migrate.discover(pg_migrate.PG_MIGRATIONS_DIR)
                                                 if m.version < 3])
        for sql in rows:
            await conn.execute(sql)
        later = [m.version for m in pg_migrate.discover(pg_migrate.PG_MIGRATIONS_DIR) if m.version >= 3]
        assert await pg_migrate.apply_migrations(conn, pg_migrate.discover(pg_migrate.PG_MIGRATIONS_DIR)) == later
        pg_seen = [[tuple(r) for r in await conn.fetch(sql)] for sql in read]
    finally:
        await conn.close()

    assert pg_seen[:3] == lite_seen[:3]
    assert pg_seen[0] == [("s1", "asking"), ("s2", "working"), ("s3", "asking")]
    assert pg_seen[1] == [("s1", None), ("s3", 2)]
    assert pg_seen[2] == [("s1", "test:a:", "question", "pending", 5.0, "call_1", 0, 0)]
    expected = {"tool_call_id": "call_1", "question": "哪天出发？", "options": ["周五", "周六"], "lang": "zh",
                "user_id": "u1", "user_name": "小明"}
    [[(pg_body,)], [(lite_body,)]] = pg_seen[3], lite_seen[3]
    assert json.loads(pg_body) == json.loads(lite_body) == expected
    store = await opened(pg_url)  # and the store reads it: the row is the delivery worker's
    try:
        [row] = await store.pending_outbox("test:a:")
        assert row.kind == "question" and json.loads(row.body) == expected
    finally:
        await store.close()


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
        event = ChatEvent("test:chat9:", "expired", "{}", "expired:s9:q")  # an event wakes its chat too
        await b.add_events([event])
        assert await asyncio.wait_for(woken.get(), 5) == (INBOX_CHANNEL, "test:chat9:")
        await b.add_events([event])  # a duplicate wakes nobody
        await b.add_inbox("test", "3", "test:chat8:", "{}")  # (the next wake-up is this one's)
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


@pytest.mark.empty_database
async def test_three_processes_starting_on_an_empty_database_migrate_it_once(pg_url):
    stores = [PostgresStore(pg_url, pool_min=1, pool_max=2) for _ in range(3)]
    await asyncio.gather(*(s.open() for s in stores))
    try:
        conn = await asyncpg.connect(pg_url)
        try:
            versions = [r[0] for r in await conn.fetch("SELECT version FROM schema_version ORDER BY version")]
        finally:
            await conn.close()
        assert versions == [m.version for m in pg_migrate.discover(pg_migrate.PG_MIGRATIONS_DIR)]
        assert all([await s.ping() for s in stores])
    finally:
        for s in stores:
            await s.close()


async def test_every_connection_ends_a_transaction_left_idle(two):
    a, _ = two
    pool = a._need_pool()
    assert await pool.fetchval("SHOW idle_in_transaction_session_timeout") == "5s"
    assert await pool.fetchval("SHOW application_name") == "travel-bot"
    # kept open for the process's life: the server keeps an idle connection's path alive
    assert await pool.fetchval("SHOW tcp_keepalives_idle") == "60"
    assert pool.get_max_size() == 4


async def test_the_whole_pool_is_open_once_the_store_is(pg_url):
    """A pool that grows when a burst arrives opens each connection while the cores are busy
    with the burst, and the steps that asked for one wait for it (pg_connect's docstring)."""
    store = PostgresStore(pg_url, pool_max=5)
    await store.open()
    try:
        async def server_processes() -> int:  # the one asking is one of them
            return int(await store._need_pool().fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name = 'travel-bot'"))

        deadline = time.monotonic() + 5  # the migration's connection may take a moment to go
        while (count := await server_processes()) != 5 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert count == 5  # before any chat asked for a connection
    finally:
        await store.close()


async def test_each_pooled_connection_meets_the_steps_functions_before_a_chat_does_and_writes_nothing(pg_url):
    """A PL/pgSQL function's first call on a connection compiles it (bot.store.postgres.writes.warm)."""
    admin = await asyncpg.connect(pg_url)
    try:
        database = await admin.fetchval("SELECT current_database()")
        await admin.execute(f'ALTER DATABASE "{database}" SET track_functions = \'pl\'')  # for new connections
        store = PostgresStore(pg_url, pool_max=3)
        await store.open()
        await store.close()  # an idle backend may hold its counts back for ten seconds; one that ends reports them

        async def calls() -> dict[str, int]:
            rows = await admin.fetch("SELECT funcname, calls FROM pg_stat_user_functions")
            return {r["funcname"]: r["calls"] for r in rows}

        deadline = time.monotonic() + 10  # the backends end a moment after their connections close
        while (seen := await calls()).get("bot_outbox_sent", 0) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for name in ("bot_append_step", "bot_pause", "bot_finish_run", "bot_resolve_question", "bot_outbox_sent"):
            assert seen.get(name) == 3, (name, seen)
        for table in ("sessions", "messages", "questions", "outbox", "inbox", "runs"):
            assert await admin.fetchval(f"SELECT count(*) FROM {table}") == 0, table
    finally:
        await admin.close()


async def test_a_new_connection_writes_a_whole_conversation_without_looking_up_a_type(pg_url):
    """asyncpg knows text[] and oid[]; any other array type (bigint[], double precision[]) it
    looks up with a catalog query the first time a connection meets it, which cost the server
    20-60 ms on every connection a pool opened under load. The store sends such arrays as text[]."""
    store = PostgresStore(pg_url, pool_min=1, pool_max=1)
    await store.open()
    try:
        pool = store._need_pool()
        async with pool.acquire() as conn:  # the pool's one connection, new: it has met no type yet
            queries: list[str] = []
            conn.add_query_logger(lambda q: queries.append(q.query))
        taken = await store.take_lease(KEY, "proc-a", 60)
        assert taken is not None
        with store.fenced(taken.lease):
            session_id = await session_of(store)
            await store.append(session_id, [Message.assistant("thinking")], step=1, inbox_done=[1])
            asked = [question(session_id)]
            [outbox_id] = await store.pause(session_id, [Message.assistant("asking")], asked,
                                            postings=postings_for(asked), step=2)
            await store.outbox_sent(outbox_id, 1, "m1")
            answer = await store.add_inbox("test", "2", KEY, "{}")
            assert await store.resolve_question(session_id, "call_q", Message.user("Fri"), status="answered",
                                                inbox_id=answer)
            usage = RunUsage(session_id, 1, "m", 10, 5, 2, 0.01, 3, "answered")
            ids = await store.finish_run(session_id, [Message.assistant("done")], outbox=[("answer", "{}")],
                                         inbox_done=[answer or 0], usage=usage)
        assert len(ids) == 1 and all(isinstance(i, int) for i in ids)
        renewed = await store.renew_leases([taken.lease], 60)
        assert renewed[KEY].fence == taken.lease.fence
        assert any("bot_finish_run" in q for q in queries)  # the logger saw the conversation
        assert [q for q in queries if "pg_type" in q] == []
    finally:
        await store.close()


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
    from bot.store.sqlite.store import SqliteStore

    both = Settings(_env_file=None, BOT_DB_URL="postgresql://u@127.0.0.1/x", BOT_DB_PATH=str(tmp_path / "a.db"))  # type: ignore[call-arg]
    assert isinstance(make_store(both), PostgresStore)
    assert isinstance(make_store(Settings(_env_file=None, BOT_DB_PATH=str(tmp_path / "a.db"))), SqliteStore)  # type: ignore[call-arg]
    assert isinstance(make_store(Settings(_env_file=None, BOT_DB_URL="")), SqliteStore)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="postgresql://"):
        Settings(_env_file=None, BOT_DB_URL="mysql://u@h/x")  # type: ignore[call-arg]


@pytest.mark.empty_database
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
