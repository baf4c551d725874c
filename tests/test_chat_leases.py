"""LeasedOwnership (bot.cluster.leases): two processes' ownership objects on one database.

The clock of process A is a test clock, so "A was stopped past its lease" is a step of it; the
database's leases run on the server's clock, as in production.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agent_core.schema import Message
from bot.cluster.leases import LeasedOwnership
from bot.store.base import LeaseLost, QuestionRow, TurnStart
from bot.store.postgres.store import PostgresStore

KEY = "test:lease1:"
LEASE_S = 0.6


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def stores(pg_url: str) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    a, b = PostgresStore(pg_url, pool_min=1, pool_max=4), PostgresStore(pg_url, pool_min=1, pool_max=4)
    await a.open()
    await b.open()
    yield a, b
    await a.close()
    await b.close()


async def test_a_taken_over_chat_is_lost_its_writes_refused_and_sends_stopped(stores) -> None:
    store_a, store_b = stores
    clock = Clock()
    lost: list[str] = []
    a = LeasedOwnership(store_a, LEASE_S, owner="proc-a", clock=clock)
    b = LeasedOwnership(store_b, LEASE_S, owner="proc-b")
    a.bind(lambda key: None, lost.append)  # renewals by hand below: no listener, no loops
    claim = await a.claim(KEY)
    assert claim is not None and claim.fresh and a.holds(KEY)
    assert await b.claim(KEY) is None  # held live by A
    again = await a.claim(KEY)
    assert again is not None and not again.fresh and again.lease == claim.lease  # A holds it already

    clock.now += LEASE_S  # A is stopped past its lease: it may not send, even before it knows more
    assert not a.holds(KEY)
    await asyncio.sleep(LEASE_S + 0.1)  # the lease runs out on the database's clock too
    taken = await b.claim(KEY)
    assert taken is not None and taken.lease is not None and claim.lease is not None
    assert taken.lease.fence > claim.lease.fence

    inbox = await store_b.add_inbox("test", "1", KEY, "{}")
    with a.scope(claim), pytest.raises(LeaseLost):  # A wakes up and writes: refused
        await store_a.start_turn(TurnStart(KEY, inbox or 0, Message.user("hi"), "en", "u1", "Ann", "hi", None))
    await a.renew()  # A's renewal finds the chat taken over
    assert lost == [KEY] and not a.holds(KEY)
    with b.scope(taken):
        await store_b.start_turn(TurnStart(KEY, inbox or 0, Message.user("hi"), "en", "u1", "Ann", "hi", None))
    await b.renew()
    assert b.holds(KEY)


async def test_released_then_claimed_elsewhere_and_renewal_keeps_a_lease_alive(stores) -> None:
    store_a, store_b = stores
    a = LeasedOwnership(store_a, LEASE_S, owner="proc-a")
    b = LeasedOwnership(store_b, LEASE_S, owner="proc-b")
    assert await a.claim(KEY) is not None
    for _ in range(3):  # renewed, it outlives its length
        await asyncio.sleep(LEASE_S / 2)
        await a.renew()
    assert a.holds(KEY) and await b.claim(KEY) is None
    first = await a.claim(KEY)
    a.release(KEY)
    claim = await a.claim(KEY)  # claimed again within the linger: the same lease, no new grant
    assert claim is not None and first is not None and not claim.fresh and claim.lease == first.lease
    a.release(KEY)
    assert await b.claim(KEY) is None  # lingering: still held
    async with asyncio.timeout(5):
        while await b.claim(KEY) is None:  # released after the linger, in the background
            await asyncio.sleep(0.01)


async def test_a_notify_and_the_sweep_wake_chats_with_work_and_no_live_owner(stores) -> None:
    store_a, store_b = stores
    woken: asyncio.Queue[str] = asyncio.Queue()
    a = LeasedOwnership(store_a, 60.0, owner="proc-a")  # its own loops never run here: sweeps by hand
    await a.start(woken.put_nowait, lambda key: None)
    try:
        await store_b.add_inbox("test", "n1", KEY, "{}")  # stored by another process: NOTIFY
        async with asyncio.timeout(5):
            while await woken.get() != KEY:
                pass
        b = LeasedOwnership(store_b, LEASE_S, owner="proc-b")
        assert await b.claim(KEY) is not None
        await a.sweep()  # once it returns, a sweep of a's own that read before the claim has woken too
        while not woken.empty():  # the start-up sweep may have seen the row too
            woken.get_nowait()
        await a.sweep()
        assert woken.empty()  # a live owner: the sweep leaves the chat alone ...
        async with asyncio.timeout(LEASE_S * 5):  # ... until that owner dies (b renews no more)
            while woken.empty():
                await a.sweep()
                await asyncio.sleep(0.05)  # the lease runs out on the server's clock: poll it
        assert woken.get_nowait() == KEY
    finally:
        await a.stop()


async def test_messages_set_aside_for_a_waiting_question_are_not_work_for_the_sweep(stores) -> None:
    store_a, _ = stores
    inbox = await store_a.add_inbox("test", "s1", KEY, "{}")
    session = await store_a.start_turn(TurnStart(KEY, inbox or 0, Message.user("hi"), "en", "u1", "Ann", "hi", None))
    await store_a.pause(session.id, [], [QuestionRow(session.id, "call_q", "When?", (), "u1", 0.0, 9e9, None, "waiting")],
                        step=1)
    held = await store_a.add_inbox("test", "s2", KEY, "{}")
    assert await store_a.unowned_chats_with_work() == [KEY]  # not yet looked at: work
    await store_a.notice_inbox(held or 0, KEY, session.id, "{}")
    await store_a.outbox_sent((await store_a.pending_outbox(KEY))[0].id, 1, "m1")
    for row in await store_a.pending_outbox(KEY):
        await store_a.outbox_sent(row.id, 1, "m2")
    assert await store_a.unowned_chats_with_work() == []  # set aside for the question: no work
    await store_a.add_inbox("test", "s3", KEY, "{}")  # the answer, say
    assert await store_a.unowned_chats_with_work() == [KEY]


async def until_released(store: PostgresStore, key: str) -> None:
    async with asyncio.timeout(5):
        while await store.current_lease(key) is not None:  # the release is committed
            await asyncio.sleep(0.02)


async def settled(own: LeasedOwnership, woken: asyncio.Queue[str]) -> None:
    """Once a sweep returns, no sweep that read the table before it is still waking chats: what
    was woken so far is forgotten."""
    await own.sweep()
    while not woken.empty():
        woken.get_nowait()


async def test_a_notify_wakes_only_the_holder_and_a_process_that_released_the_chat_just_now(stores) -> None:
    """Every process hears every NOTIFY, but only the chat's holder acts on it, or a process that
    released the chat moments ago (the message's storer found the lease still held). Any other
    claim could only lose: the storer claims the chat itself. The sweep still wakes a chat whose
    owner died, in every process."""
    store_a, store_b = stores
    clock = Clock()
    woken: asyncio.Queue[str] = asyncio.Queue()
    a = LeasedOwnership(store_a, LEASE_S, owner="proc-a")  # it renews what it holds; its wake-ups go nowhere
    b = LeasedOwnership(store_b, LEASE_S, owner="proc-b", clock=clock)
    mine = "test:lease-mine:"
    await a.start(lambda key: None, lambda key: None)
    await b.start(woken.put_nowait, lambda key: None)
    try:
        async with asyncio.timeout(5):  # the start-up sweep's wake-ups, if any, are over
            await settled(b, woken)
        assert await a.claim(KEY) is not None
        assert await b.claim(mine) is not None

        async def notified_in_order() -> list[str]:
            """Wake-ups of two NOTIFYs, KEY's first: once `mine` is woken, KEY's was handled."""
            await store_a.add_inbox("test", f"k{clock.now}", KEY, "{}")
            await store_a.add_inbox("test", f"m{clock.now}", mine, "{}")
            seen = []
            async with asyncio.timeout(5):
                while not seen or seen[-1] != mine:
                    seen.append(await woken.get())
            return seen

        assert await notified_in_order() == [mine]  # A's chat: B never held it, B spends no claim
        b.release(mine)  # after the linger: released, and remembered as released just now
        await until_released(store_a, mine)
        sentinel = "test:lease-sentinel:"
        assert await b.claim(sentinel) is not None
        await settled(b, woken)  # no sweep that saw `mine` unowned is still waking it
        await store_a.add_inbox("test", "after-release", mine, "{}")
        await store_a.add_inbox("test", "after-release-s", sentinel, "{}")
        seen_before: list[str] = []
        async with asyncio.timeout(5):  # NOTIFYs arrive in order: `mine`'s came first
            while not seen_before or seen_before[-1] != sentinel:
                seen_before.append(await woken.get())
        assert mine in seen_before  # released just now: B takes it back
        assert await b.claim(mine) is not None
        b.release(mine)
        await until_released(store_a, mine)
        clock.now += 60.0  # long after the release: B leaves the chat to whoever holds it
        assert await a.claim(mine) is not None
        await settled(b, woken)
        await store_a.add_inbox("test", "late-m", mine, "{}")
        await store_a.add_inbox("test", "late-k", KEY, "{}")
        await store_a.add_inbox("test", "late-s", sentinel, "{}")
        async with asyncio.timeout(5):  # NOTIFYs arrive in order: the first two woke nothing
            assert await woken.get() == sentinel
        await a.stop()  # A goes away (its leases released): the sweep wakes its chats with work
        seen: set[str] = set()
        async with asyncio.timeout(5):
            while not {KEY, mine} <= seen:
                await b.sweep()
                seen |= {woken.get_nowait() for _ in range(woken.qsize())}
        assert await b.claim(KEY) is not None  # now B is the holder and is woken
        await store_a.add_inbox("test", "after", KEY, "{}")
        async with asyncio.timeout(5):
            while await woken.get() != KEY:
                pass
    finally:
        await a.stop()
        await b.stop()
