"""One suite that every Store implementation must pass: each test runs on SQLite and on PostgreSQL.

The PostgreSQL case gets a fresh database per test on the machine's server (tests/pg_support.py);
it fails, never skips, when the server is down (unless BOT_TEST_WITHOUT_POSTGRES=1 is set).
PostgreSQL-only features (leases, fencing, LISTEN/NOTIFY) are in test_store_postgres.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path

import asyncpg
import pytest

from agent_core.schema import Function, Message, ToolCall
from bot.delivery.bodies import Audience, notice_body, question_body
from bot.store.base import (
    ChatEvent,
    InboxRow,
    OutboxRow,
    QuestionRow,
    RunRow,
    RunUsage,
    SessionRow,
    SignoffRow,
    Store,
    StoreClosed,
    TurnStart,
)
from bot.store.migrate import MIGRATIONS_DIR, discover
from bot.store.postgres.migrate import PG_MIGRATIONS_DIR
from bot.store.postgres.store import PostgresStore
from bot.store.sqlite.store import SqliteStore
from bot.surface import Notice
from bot.team.cards import signoff_cards
from tests.pg_support import fresh_database
from tests.store_support import postings_for

KEY = "test:chat1:"


@dataclass
class Backend:
    """One kind of store on one database: `new()` opens another store (another process) on it."""

    name: str
    new: Callable[[], Store]
    versions: Callable[[], Awaitable[list[int]]]  # what schema_version records
    expected: list[int]  # the versions its migrations directory has


@pytest.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    if request.param == "sqlite":
        path = tmp_path / "store.sqlite3"

        async def sqlite_versions() -> list[int]:
            with sqlite3.connect(path) as conn:
                return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]

        yield Backend("sqlite", lambda: SqliteStore(path), sqlite_versions,
                      [m.version for m in discover(MIGRATIONS_DIR)])
        return
    async with fresh_database(migrated=request.node.get_closest_marker("empty_database") is None) as url:

        async def pg_versions() -> list[int]:
            conn = await asyncpg.connect(url)
            try:
                return [r[0] for r in await conn.fetch("SELECT version FROM schema_version ORDER BY version")]
            finally:
                await conn.close()

        yield Backend("postgres", lambda: PostgresStore(url, pool_min=1, pool_max=5), pg_versions,
                      [m.version for m in discover(PG_MIGRATIONS_DIR)])


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    s = backend.new()
    await s.open()
    yield s
    await s.close()


def turn(inbox_id: int, text: str = "hello") -> TurnStart:
    return TurnStart(KEY, inbox_id, Message.user(text), "en", "u1", "Ann", text, None)


def question(session_id: str, call_id: str = "call_q", deadline: float | None = None) -> QuestionRow:
    now = time.time()
    return QuestionRow(session_id, call_id, "When?", ("Fri", "Sat"), "u1", now, deadline or now + 60, None, "waiting")


async def test_an_update_is_committed_when_add_inbox_returns_and_a_duplicate_is_none(backend: Backend, store: Store):
    """A message is stored before anything acts on it: once add_inbox returns, another store on
    the same database (another process) reads it."""
    before = time.time()
    inbox_id = await store.add_inbox("test", "s1", KEY, '{"x": 1}')
    after = time.time()
    assert inbox_id is not None
    other = backend.new()
    await other.open()
    try:
        [row] = await other.inbox_for(KEY)
    finally:
        await other.close()
    assert (row.id, row.body, row.kind) == (inbox_id, '{"x": 1}', "message") and before <= row.received_at <= after
    assert await store.add_inbox("test", "s1", KEY, "{}") is None  # a duplicate
    later = await store.add_inbox("test", "s2", KEY, "{}")
    assert later is not None and later > inbox_id


async def test_inbox_deduplicates_by_platform_id(store: Store):
    first = await store.add_inbox("test", "7", KEY, "{}")
    assert first is not None
    assert await store.add_inbox("test", "7", KEY, "{}") is None
    assert await store.add_inbox("other", "7", KEY, "{}") is not None  # ids are per platform
    assert await store.add_inbox("test", "", KEY, "{}") is not None  # no id: never a duplicate
    assert await store.add_inbox("test", "", KEY, "{}") is not None
    assert next(r.id for r in await store.inbox_for(KEY)) == first
    assert await store.chats_with_inbox() == [KEY]


async def test_each_row_class_is_its_tables_columns_by_name(backend: Backend, store: Store):
    """Reads select a row class's fields and writes store a row by its fields' names (PostgreSQL
    fills the table's whole record from them): a new column is its migrations and its field."""
    if backend.name == "sqlite":
        path = tmp_store_path(store)
        with sqlite3.connect(path) as conn:
            def table(name: str) -> set[str]:
                return {r[1] for r in conn.execute(f"PRAGMA table_info({name})")}
            tables = {t: table(t) for t in ("sessions", "questions", "signoffs", "outbox", "inbox", "runs")}
    else:
        assert isinstance(store, PostgresStore)
        rows = await store._rows("SELECT table_name, column_name FROM information_schema.columns "
                                 "WHERE table_schema = current_schema()")
        tables = {}
        for name, column in rows:
            tables.setdefault(name, set()).add(column)
    whole = {"questions": QuestionRow, "signoffs": SignoffRow, "outbox": OutboxRow, "runs": RunRow}
    for name, cls in whole.items():  # stored whole: exactly the class's fields
        assert tables[name] == {f.name for f in fields(cls)}, name
    assert {f.name for f in fields(SessionRow)} | {"closed"} == tables["sessions"]
    assert {f.name for f in fields(InboxRow)} | {"status", "error"} == tables["inbox"]


def tmp_store_path(store: Store) -> Path:
    assert isinstance(store, SqliteStore)
    return store.path


async def test_a_noticed_row_stays_pending_with_its_notice_queued_once(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    assert inbox is not None
    assert [r.noticed for r in await store.inbox_for(KEY)] == [False]
    out_id = await store.notice_inbox(inbox, KEY, "s1", '{"kind": "queued"}')
    [row] = await store.inbox_for(KEY)  # still pending: it waits for the question's answer
    assert (row.id, row.noticed) == (inbox, True)
    [notice] = await store.pending_outbox(KEY)
    assert (notice.id, notice.kind, notice.session_id) == (out_id, "notice", "s1")


async def test_a_turn_creates_the_session_and_consumes_its_inbox_row(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    assert inbox is not None
    session = await store.start_turn(turn(inbox))
    assert session.state == "working" and session.run_no == 1 and session.lang == "en"
    assert await store.inbox_for(KEY) == []
    assert [m.content for m in await store.load_messages(session.id)] == ["hello"]
    again = await store.start_turn(turn(inbox, "more"))
    assert again.id == session.id and again.run_no == 2


async def test_pause_answer_once_and_finish_with_an_outbox_row(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    call = ToolCall(id="call_q", function=Function(name="ask_human", arguments='{"inquire": "When?"}'))
    await store.append(session.id, [Message.assistant(None, [call])], step=1)
    asked = [question(session.id)]
    [question_row] = await store.pause(session.id, [], asked, postings=postings_for(asked), step=1)
    assert (await store.get_session(KEY)).state == "asking"  # type: ignore[union-attr]
    q = await store.get_question(session.id)
    assert q is not None and q.options == ("Fri", "Sat") and q.posted_message_id is None and q.posted_after is None
    [row] = await store.pending_outbox(KEY)  # the question's posting is queued with the pause
    assert row.id == question_row and row.kind == "question" and row.tool_call_id == "call_q"
    later = await store.add_inbox("test", "2", KEY, "{}")
    await store.outbox_sent(question_row, 1, "m42")  # posted: later messages may answer it
    [w] = await store.waiting_questions()
    assert w.posted_message_id == "m42" and w.posted_after == later
    answer = Message.tool("Fri", tool_call_id="call_q", name="ask_human")
    assert await store.resolve_question(session.id, "call_q", answer, status="answered", inbox_id=None)
    assert not await store.resolve_question(session.id, "call_q", answer, status="answered", inbox_id=None)
    msgs = await store.load_messages(session.id)
    assert [m.role.value for m in msgs] == ["user", "assistant", "tool"]
    [outbox_id] = await store.finish_run(session.id, [Message.assistant("done")], outbox=[("answer", '{"text": "done"}')])
    assert (await store.get_session(KEY)).state == "idle"  # type: ignore[union-attr]
    assert [o.id for o in await store.pending_outbox()] == [outbox_id]
    await store.outbox_sent(outbox_id, 1, None)
    assert await store.pending_outbox() == []


async def test_a_question_s_watermark_is_recorded_before_its_first_posting_and_kept(store: Store):
    """Recorded before the first attempt, kept across re-posts: a process killed after the
    platform took the question but before outbox_sent re-posts it after the restart, and the
    answer given in between stays above the watermark; what was said before the first attempt
    stays below it. A question asked again under the same id starts afresh."""
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    asked = [question(session.id)]
    [row] = await store.pause(session.id, [], asked, postings=postings_for(asked), step=1)
    before = await store.add_inbox("test", "said-before", KEY, "{}")  # before the question was posted
    mark = await store.record_watermark(row)  # the first attempt
    assert before is not None and mark == before
    q = await store.get_question(session.id)
    assert q is not None and q.first_post_after == mark and q.posted_after is None  # not posted yet
    answer = await store.add_inbox("test", "answer", KEY, "{}")  # the platform took it; the process died
    assert await store.record_watermark(row) == mark  # the re-post after the restart
    await store.outbox_sent(row, 1, "m2", posted_after=answer)  # a later watermark passed: the first one wins
    posted = await store.get_question(session.id)
    assert posted is not None and posted.posted_after == mark and posted.posted_message_id == "m2"
    assert answer is not None and before <= posted.posted_after < answer
    notice = await store.queue_outbox(KEY, session.id, "notice", '{"text": "hi"}')
    await store.outbox_attempt_failed(notice, "down")  # another row's failure touches no question
    assert (await store.get_question(session.id)).posted_after == mark  # type: ignore[union-attr]
    assert await store.record_watermark(notice) is None  # a row that posts no question
    [again] = await store.pause(session.id, [], asked, postings=postings_for(asked), step=2)
    fresh = await store.get_question(session.id)
    assert fresh is not None and fresh.first_post_after is None and fresh.posted_after is None
    assert await store.record_watermark(again) == answer


async def test_a_failed_posting_attempt_clears_the_question_s_watermark(store: Store):
    """An attempt that failed reached nobody: a message sent before the next attempt did not
    come after the question, and the next attempt records its own watermark."""
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    asked = [question(session.id)]
    [row] = await store.pause(session.id, [], asked, postings=postings_for(asked), step=1)
    first = await store.record_watermark(row)
    await store.outbox_attempt_failed(row, "platform down")
    q = await store.get_question(session.id)
    assert q is not None and q.first_post_after is None
    unseen = await store.add_inbox("test", "unseen", KEY, "{}")  # nobody saw a question yet
    second = await store.record_watermark(row)
    assert first is not None and unseen is not None and second == unseen > first
    await store.outbox_sent(row, 1, "m1")
    posted = await store.get_question(session.id)
    assert posted is not None and posted.posted_after == second
    await store.outbox_attempt_failed(row, "late")  # a posted question keeps what it was posted with
    kept = await store.get_question(session.id)
    assert kept is not None and kept.first_post_after == second and kept.posted_after == second


async def test_a_session_s_sent_rows_and_ratings_are_read_back_in_order(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    answer, file = await store.finish_run(
        session.id, [Message.assistant("done")], outbox=[("answer", '{"text": "done"}'), ("file", '{"filename": "a.ics"}')],
        usage=RunUsage(session.id, session.run_no, "gpt-4o-mini", 1, 1, 1, 0.0, 1, "answered"))
    assert await store.sent_outbox(session.id) == []  # nothing delivered yet
    await store.outbox_sent(answer, 2, "m1")
    assert [(r.id, r.kind, r.parts_sent) for r in await store.sent_outbox(session.id)] == [(answer, "answer", 2)]
    await store.outbox_sent(file, 1, "m2")
    assert [r.id for r in await store.sent_outbox(session.id)] == [answer, file]
    assert await store.sent_outbox("another session") == []

    assert await store.session_feedback(session.id) == []
    assert await store.record_feedback(KEY, session.id, session.run_no, "u1", "up", 1.0)
    assert await store.record_feedback(KEY, session.id, session.run_no, "u1", "down", 2.0)  # the latest counts
    [rating] = await store.session_feedback(session.id)
    assert (rating.run_no, rating.user_id, rating.rating, rating.chat_key) == (session.run_no, "u1", "down", KEY)
    assert await store.session_feedback("another session") == []


async def test_a_question_s_outbox_body_is_the_text_the_chat_task_builds(store: Store):
    """The chat task hands the delivery worker the body it built (bot.run.outcome) and gives the
    store the same for its row: the row must be that text, escapes and all (PostgreSQL gets it
    inside the write's JSON record)."""
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    now = time.time()
    odd = 'Quote " back\\slash\nline\ttab \x01 é 北京 🚆 </script>'
    asked = [QuestionRow(session.id, "call_x", odd, (odd, "Sat"), "U\"1", now, now + 60, None, "waiting",
                         addressee="@ana é"),
             QuestionRow(session.id, "call_y", "Plain?", (), "", now, now + 60, None, "waiting")]
    expected = [question_body(q.tool_call_id, q.question, q.options,
                              Audience(session.lang, q.asker_id, q.addressee or session.asker_name)) for q in asked]
    rows = await store.pause(session.id, [], asked, postings=expected, step=1)
    outbox = await store.pending_outbox(KEY)
    assert [o.id for o in outbox] == rows and [o.tool_call_id for o in outbox] == ["call_x", "call_y"]
    assert [o.body for o in outbox] == expected


async def test_several_addressed_questions_wait_at_once_and_the_last_answer_resumes(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    calls = [ToolCall(id=f"call_{who}", function=Function(name="ask_human", arguments="{}")) for who in ("a", "b")]
    await store.append(session.id, [Message.assistant(None, calls)], step=1)
    now = time.time()
    asked = [QuestionRow(session.id, f"call_{who}", f"When do you leave, {who}?", (), uid, now + i, now + 60, None,
                         "waiting", addressee=label)
             for i, (who, uid, label) in enumerate((("a", "UA", "<@UA>"), ("b", "", "@bo")))]
    rows = await store.pause(session.id, [], asked, postings=postings_for(asked), step=1)
    outbox = await store.pending_outbox(KEY)
    assert [o.id for o in outbox] == rows and [o.tool_call_id for o in outbox] == ["call_a", "call_b"]
    assert '"user_id": "UA"' in outbox[0].body and '"user_name": "@bo"' in outbox[1].body  # each mentions its person
    waiting = await store.questions_for_chat(KEY)
    assert [(q.tool_call_id, q.asker_id, q.addressee) for q in waiting] == [("call_a", "UA", "<@UA>"), ("call_b", "", "@bo")]
    answer_b = Message.tool("Friday", tool_call_id="call_b", name="ask_human")
    assert await store.resolve_question(session.id, "call_b", answer_b, status="answered", inbox_id=None)
    assert (await store.get_session(KEY)).state == "asking"  # type: ignore[union-attr]  # a still waits
    assert [q.tool_call_id for q in await store.questions_for_chat(KEY)] == ["call_a"]
    answer_a = Message.tool("nobody answered", tool_call_id="call_a", name="ask_human")
    assert await store.resolve_question(session.id, "call_a", answer_a, status="expired", inbox_id=None)
    assert (await store.get_session(KEY)).state == "working"  # type: ignore[union-attr]
    tools = [m.tool_call_id for m in await store.load_messages(session.id) if m.role.value == "tool"]
    assert tools == ["call_b", "call_a"]  # each answer is its own call's result, in the order they came


async def test_the_chat_view_reads_rows_session_and_waiting_questions_as_the_single_reads_do(store: Store):
    empty = await store.chat_view(KEY)
    assert (empty.rows, empty.session, empty.questions) == ([], None, [])
    first = await store.add_inbox("test", "1", KEY, "{}")
    assert [r.id for r in (await store.chat_view(KEY)).rows] == [first]
    session = await store.start_turn(turn(first or 0))
    working = await store.chat_view(KEY)
    assert (working.rows, working.session, working.questions) == ([], session, [])
    call = ToolCall(id="call_q", function=Function(name="ask_human", arguments="{}"))
    await store.append(session.id, [Message.assistant(None, [call])], step=1)
    await store.pause(session.id, [], asked := [question(session.id)], postings=postings_for(asked), step=1)
    answer = await store.add_inbox("test", "2", KEY, "{}")
    other = await store.add_inbox("test", "3", "test:other:", "{}")  # another chat's row is not in the view
    asking = await store.chat_view(KEY)
    assert asking.rows == await store.inbox_for(KEY) and [r.id for r in asking.rows] == [answer] and other != answer
    assert asking.session == await store.get_session(KEY) and asking.session is not None
    assert asking.session.state == "asking"
    assert asking.questions == await store.questions_for_chat(KEY) and [q.tool_call_id for q in asking.questions] == ["call_q"]
    assert (await store.chat_view(KEY, limit=0)).rows == []


async def test_a_team_plan_waits_for_sign_off_with_its_reminder_and_deadline(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    now = time.time()
    signoff = SignoffRow("so1", session.id, KEY, "waiting", ("U9", "@boss"), now, now + 10, now + 20)
    await store.finish_run(session.id, [Message.assistant("plan")], outbox=[("answer", "{}")], signoff=signoff)
    assert (await store.get_session(KEY)).state == "signoff"  # type: ignore[union-attr]
    assert await store.signoff_for_chat(KEY) == signoff
    assert await store.next_deadline(after=now) == now + 10  # the reminder first
    assert [g.id for g in await store.due_signoffs(now + 11)] == ["so1"] and await store.due_signoffs(now + 1) == []
    assert await store.signoff_reminded("so1", inbox_id=None, outbox=[("notice", "{}")]) is not None
    assert await store.signoff_reminded("so1", inbox_id=None) is None  # one reminder
    assert await store.next_deadline(after=now + 11) == now + 20
    rows = await store.decide_signoff("so1", "rejecting", "U9", outbox=[("notice", '{"why": 1}')])
    assert rows is not None and len(rows) == 1
    assert (await store.get_session(KEY)).state == "signoff"  # type: ignore[union-attr]  # waiting for the reason
    reason = await store.add_inbox("test", "2", KEY, "{}")
    replan = TurnStart(KEY, reason or 0, Message.user("[sign-off] rejected"), "en", "U9", "Boss", "hello", None,
                       rejected_by="U9", reason="too expensive")
    await store.start_turn(replan)
    decided = await store.signoff_for_chat(KEY)
    assert decided is not None and (decided.status, decided.decided_by, decided.reason) == ("rejected", "U9", "too expensive")
    assert await store.decide_signoff("so1", "approved", "U9") is None  # decided already
    again = SignoffRow("so2", session.id, KEY, "waiting", ("U9",), now + 1, now + 10, now + 20)
    await store.finish_run(session.id, [Message.assistant("plan 2")], signoff=again)
    assert await store.decide_signoff("so2", "approved", "U9", outbox=[("notice", "{}")]) is not None
    approved = await store.signoff_for_chat(KEY)
    assert approved is not None and approved.status == "approved" and approved.decided_at is not None
    assert (await store.get_session(KEY)).state == "idle"  # type: ignore[union-attr]
    await store.add_approver("slack", "C1", "U7", "U1")
    await store.add_approver("slack", "C1", "U7", "U1")
    assert await store.channel_approvers("slack", "C1") == ["U7"] and await store.channel_approvers("slack", "C2") == []


async def test_a_sign_off_s_cards_are_its_notices_delivered_with_their_message_ids(store: Store):
    """What an expiry closes (bot.team.cards): the session's delivered notices that carry the sign-off."""
    def card(signoff_id: str, text: str) -> str:
        return notice_body(Notice("signoff", text, signoff_id=signoff_id))

    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    now = time.time()
    signoff = SignoffRow("so1", session.id, KEY, "waiting", ("U9",), now, now + 10, now + 20)
    answer, request = await store.finish_run(session.id, [Message.assistant("plan")], signoff=signoff,
                                             outbox=[("answer", "{}"), ("notice", card("so1", "sign it off"))])
    [reminder] = await store.signoff_reminded("so1", inbox_id=None, outbox=[("notice", card("so1", "reminder"))]) or []
    older = await store.queue_outbox(KEY, session.id, "notice", card("so0", "an older plan's"))
    assert await signoff_cards(store, session.id, "so1") == ()  # nothing delivered yet
    for row, message_id in ((answer, "m1"), (request, "m3"), (older, "m4")):
        await store.outbox_sent(row, 1, message_id)
    assert await signoff_cards(store, session.id, "so1") == ("m3",)
    await store.outbox_sent(reminder, 1, "m5")
    assert await signoff_cards(store, session.id, "so1") == ("m3", "m5")  # oldest first
    assert await signoff_cards(store, "another session", "so1") == ()


async def test_a_failed_question_row_tells_its_chat_and_counts(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    [row] = await store.pause(session.id, [], asked := [question(session.id)], postings=postings_for(asked), step=1)
    await store.outbox_attempt_failed(row, "timed out")
    [pending] = await store.pending_outbox(KEY)
    assert pending.attempts == 1 and pending.error == "timed out"
    await store.outbox_failed(row, "Forbidden: bot was blocked by the user")
    await store.outbox_failed(row, "Forbidden: bot was blocked by the user")  # told once
    [failed] = await store.failed_outbox(KEY)
    assert failed.status == "failed" and failed.error == "Forbidden: bot was blocked by the user"
    [event] = await store.inbox_for(KEY)
    assert event.kind == "undeliverable" and "call_q" in event.body
    counts = await store.counts()
    assert (counts.outbox_failed, counts.outbox_pending, counts.questions_waiting, counts.sessions_asking) == (1, 0, 1, 1)
    assert counts.inbox_pending == 1


async def test_events_are_stored_once_and_set_aside_rows_leave_the_inbox(store: Store):
    event = ChatEvent(KEY, "resume", '{"session_id": "s"}', "resume:s:boot1")
    await store.add_events([event, event])
    [row] = await store.inbox_for(KEY)
    assert row.kind == "resume"
    await store.fail_inbox(row.id, "ValueError: bad")
    assert await store.inbox_for(KEY) == [] and await store.chats_with_inbox() == []


async def test_steering_rows_close_with_the_step_that_read_them(store: Store):
    first = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(first or 0))
    steer = await store.add_inbox("test", "2", KEY, "{}")
    assert [r.id for r in await store.inbox_for(KEY)] == [steer]
    await store.append(session.id, [Message.user("also, trains"), Message.assistant("ok")], step=1,
                       inbox_done=[steer or 0])
    assert await store.inbox_for(KEY) == []


async def test_due_questions_and_the_next_deadline(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    soon = time.time() + 5
    asked = [question(session.id, deadline=soon)]
    await store.pause(session.id, [], asked, postings=postings_for(asked), step=1)
    assert await store.next_deadline() == pytest.approx(soon)
    assert await store.due_questions(soon - 1) == []
    assert [q.tool_call_id for q in await store.due_questions(soon + 1)] == ["call_q"]


async def test_a_reminder_is_due_once_and_queued_once(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    now = time.time()
    q = QuestionRow(session.id, "call_q", "When?", (), "u1", now, now + 60, None, "waiting", remind_at=now + 10)
    await store.pause(session.id, [], [q], postings=postings_for([q]), step=1)
    assert await store.next_deadline() == pytest.approx(now + 10)  # the reminder comes first
    assert await store.due_reminders(now + 9) == []
    [due] = await store.due_reminders(now + 11)
    assert due.remind_at == pytest.approx(now + 10)
    events = [await store.add_inbox("test", f"e{i}", KEY, "{}") or 0 for i in range(2)]
    first = await store.remind(session.id, "call_q", '{"kind": "reminder", "text": "When?"}', inbox_id=events[0])
    assert first is not None
    assert await store.remind(session.id, "call_q", "{}", inbox_id=events[1]) is None  # never twice
    assert [(r.id, r.kind, r.tool_call_id) for r in await store.pending_outbox(KEY)][-1] == (first, "reminder", "call_q")
    assert await store.due_reminders(now + 11) == [] and await store.inbox_for(KEY) == []
    assert await store.next_deadline() == pytest.approx(now + 60)
    await store.interrupt(session.id, [Message.tool("x", tool_call_id="call_q", name="ask_human")], close=False)
    assert await store.remind(session.id, "call_q", "{}", inbox_id=events[1]) is None


async def test_interrupt_fills_calls_cancels_questions_and_can_close(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    await store.pause(session.id, [], asked := [question(session.id)], postings=postings_for(asked), step=1)
    filler = Message.tool("cancelled", tool_call_id="call_q", name="ask_human")
    await store.interrupt(session.id, [filler], close=True)
    assert await store.get_question(session.id) is None
    assert await store.get_session(KEY) is None  # closed: the next message opens a new session
    inbox2 = await store.add_inbox("test", "2", KEY, "{}")
    fresh = await store.start_turn(turn(inbox2 or 0))
    assert fresh.id != session.id


async def test_cancel_drops_what_was_queued_before_it(store: Store):
    ids = [await store.add_inbox("test", str(i), KEY, "{}") for i in range(3)]
    await store.finish_inbox(ids[2] or 0, drop_earlier=True)
    assert await store.inbox_for(KEY) == []


async def test_concurrent_transactions_do_not_interleave(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    batches = [[Message.user(f"{i}-{j}") for j in range(5)] for i in range(20)]
    await asyncio.gather(*(store.append(session.id, batch, step=1) for batch in batches))
    texts = [m.content for m in await store.load_messages(session.id)][1:]
    assert len(texts) == 100
    for k in range(0, 100, 5):  # each batch stayed contiguous
        assert len({t.split("-")[0] for t in texts[k : k + 5]}) == 1  # type: ignore[union-attr]


async def test_location_is_remembered_without_a_run(store: Store):
    await store.remember_location(KEY, '{"latitude": 39.9, "longitude": 116.4, "label": null}', "zh")
    session = await store.get_session(KEY)
    assert session is not None and session.state == "idle" and session.location is not None


@pytest.mark.empty_database  # PostgreSQL: an empty database, not a clone of the migrated template
async def test_migrations_are_applied_once_and_recorded(backend: Backend):
    for _ in range(2):
        s = backend.new()
        await s.open()
        assert await s.ping()
        await s.close()
    assert await backend.versions() == backend.expected


async def test_a_closed_store_says_so_and_pings_false(backend: Backend):
    s = backend.new()
    await s.open()
    await s.close()
    assert not await s.ping()
    with pytest.raises(StoreClosed):
        await s.add_inbox("test", "1", KEY, "{}")


async def test_sqlite_runs_in_wal_mode(tmp_path: Path):
    path = tmp_path / "m.sqlite3"
    s = SqliteStore(path)
    await s.open()
    await s.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_usage_adds_to_the_session_and_to_its_run_row(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    await store.add_usage(RunUsage(session.id, 1, "gpt-4o-mini", 100, 10, 1, 0.25, 1, "paused"))
    await store.add_usage(RunUsage(session.id, 1, "gpt-4o-mini", 200, 20, 2, 0.5, 3, "answered"))
    again = await store.start_turn(turn(0, "more"))
    await store.add_usage(RunUsage(session.id, 2, "gpt-4o", 5, 1, 1, 0.125, 1, "failed"))
    s = await store.get_session(KEY)
    assert s is not None and (s.prompt_tokens, s.completion_tokens, s.llm_calls, s.cost_usd) == (305, 31, 4, 0.875)
    assert again.run_no == 2
    second, first = await store.recent_runs()
    assert (first.run_no, first.chat_key, first.segments, first.steps, first.outcome) == (1, KEY, 2, 3, "answered")
    assert (first.prompt_tokens, first.completion_tokens, first.llm_calls, first.cost_usd) == (300, 30, 3, 0.75)
    assert (second.run_no, second.model, second.segments, second.cost_usd, second.outcome) == (2, "gpt-4o", 1, 0.125, "failed")
    assert [r.run_no for r in await store.recent_runs(limit=1)] == [2]


async def test_a_pause_and_a_finished_run_store_their_segment_s_usage_in_the_same_write(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    await store.pause(session.id, [], asked := [question(session.id)], postings=postings_for(asked), step=1,
                      usage=RunUsage(session.id, 1, "gpt-4o-mini", 100, 10, 1, 0.25, 1, "paused"))
    answer = Message.tool("Friday", tool_call_id="call_q", name="ask_human")
    assert await store.resolve_question(session.id, "call_q", answer, status="answered", inbox_id=None)
    await store.finish_run(session.id, [Message.assistant("done")], outbox=[("answer", "{}")],
                           usage=RunUsage(session.id, 1, "gpt-4o-mini", 200, 20, 2, 0.5, 3, "answered"))
    await store.finish_run(session.id, [Message.assistant("again")])  # no usage: nothing added
    s = await store.get_session(KEY)
    assert s is not None and (s.prompt_tokens, s.completion_tokens, s.llm_calls, s.cost_usd) == (300, 30, 3, 0.75)
    [run] = await store.recent_runs()
    assert (run.run_no, run.segments, run.steps, run.outcome, run.cost_usd) == (1, 2, 3, "answered", 0.75)


async def test_a_view_with_pending_rows_may_carry_the_open_session_s_messages(store: Store):
    """A store may read the history with the view (PostgreSQL does): then it is the session's
    messages as load_messages reads them, in the same snapshot as the rows."""
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    await store.append(session.id, [Message.assistant("a1"), Message.user("u2")], step=1)
    idle = await store.chat_view(KEY)
    assert idle.rows == [] and idle.history is None  # nothing pending: nothing read
    await store.add_inbox("test", "2", KEY, "{}")
    view = await store.chat_view(KEY)
    assert view.history is None or view.history == await store.load_messages(session.id)
    if isinstance(store, PostgresStore):
        assert view.history is not None and [m.content for m in view.history] == ["hello", "a1", "u2"]


async def test_a_turn_stores_its_trace_context_with_the_session(store: Store):
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(replace(turn(inbox or 0), trace_parent=parent))
    assert session.trace_parent == parent
    again = await store.start_turn(turn(0, "more"))  # a new run, a new trace (none here: tracing off)
    assert again.trace_parent == ""


async def test_the_operators_reads_and_a_failed_delivery_put_back_in_the_queue(store: Store):
    inbox = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(inbox or 0))
    [answer] = await store.finish_run(session.id, [Message.assistant("done")], outbox=[("answer", '{"text": "done"}')])
    questions = [question(session.id, "call_x")]
    [asked] = await store.pause(session.id, [], questions, postings=postings_for(questions), step=1)
    await store.outbox_part_sent(answer, 1, "m1")
    await store.outbox_failed(answer, "403 bot was blocked")
    await store.outbox_failed(asked, "chat not found")
    assert [s.id for s in await store.open_sessions()] == [session.id]
    failed = await store.failed_deliveries()
    assert [(r.id, r.kind, r.error) for r in failed] == [(asked, "question", "chat not found"),
                                                           (answer, "answer", "403 bot was blocked")]
    assert await store.retry_outbox(asked) is None  # a failed question stopped its run: never re-posted
    assert await store.retry_outbox(answer) == KEY
    assert await store.retry_outbox(answer) is None  # pending now, not failed
    [pending] = [r for r in await store.pending_outbox(KEY) if r.id == answer]
    assert (pending.status, pending.attempts, pending.parts_sent) == ("pending", 0, 1)  # the part sent stays sent
    assert [r.id for r in await store.failed_deliveries()] == [asked]
    await store.close_session(KEY)
    assert await store.open_sessions() == []
