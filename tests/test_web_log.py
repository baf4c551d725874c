"""adapters.web.log: ordered, bounded per-session event logs and Last-Event-ID replay."""

from __future__ import annotations

import asyncio

from adapters.web.log import EventLogBook, SessionLog


def _fill(log: SessionLog, n: int) -> list[str]:
    return [log.append("step", f'{{"step": {i}}}').id for i in range(1, n + 1)]


def test_ids_increase_and_replay_resumes_after_the_last_seen_id():
    log = SessionLog("s1", max_events=10)
    ids = _fill(log, 5)
    assert len(set(ids)) == 5
    assert [int(i.rsplit("-", 1)[1]) for i in ids] == [1, 2, 3, 4, 5]
    replay = log.replay(ids[1])
    assert not replay.gap
    assert [e.id for e in replay.events] == ids[2:]
    assert log.replay(ids[-1]).events == []
    assert [e.id for e in log.replay(None).events] == ids


def test_wire_frames_carry_id_event_and_data():
    log = SessionLog("s1", max_events=10)
    logged = log.append("answer", '{"text": "hi\\nthere"}')
    assert logged.wire == f'id: {logged.id}\r\nevent: answer\r\ndata: {{"text": "hi\\nthere"}}\r\n\r\n'.encode()


def test_memory_is_bounded_and_a_trimmed_gap_is_reported():
    log = SessionLog("s1", max_events=3)
    ids = _fill(log, 6)
    assert [e.id for e in log.replay(None).events] == ids[3:]
    assert log.replay(None).gap  # events 1-3 are gone
    assert log.replay(ids[0]).gap
    resumed = log.replay(ids[2])
    assert not resumed.gap and [e.id for e in resumed.events] == ids[3:]


def test_ids_from_another_log_or_the_future_are_a_gap():
    a, b = SessionLog("s1", 10), SessionLog("s1", 10)
    _fill(a, 2)
    _fill(b, 2)
    assert a.epoch != b.epoch
    assert b.replay(a.last_id).gap
    assert b.replay(f"{b.epoch}-99").gap
    assert b.replay("garbage").gap


async def test_waiters_wake_on_append_and_on_close():
    log = SessionLog("s1", 10)
    waiter = asyncio.create_task(log.wait_after(0))
    await asyncio.sleep(0)
    assert not waiter.done()
    log.append("step", "{}")
    await asyncio.wait_for(waiter, 1)
    closing = asyncio.create_task(log.wait_after(log.last_seq))
    await asyncio.sleep(0)
    log.close()
    await asyncio.wait_for(closing, 1)


def test_book_evicts_least_recent_logs_nobody_listens_to():
    book = EventLogBook(max_sessions=2, max_events=5)
    first = book.get("a")
    first.subscribers = 1  # an open stream keeps its log
    book.get("b")
    book.get("c")
    assert len(book) == 2
    assert book.peek("a") is first
    assert book.peek("b") is None
    assert book.peek("c") is not None
