"""SqliteStore: the Store protocol on SQLite (WAL, synchronous=FULL, one writer).

Writes go to the GroupCommitWriter (one thread, one connection, grouped commits); reads go to
the SqliteReader (read-only connections: point reads inline, scans on a thread of their own), so
they never wait for a commit and see only committed data (a writer returns only after its commit).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from agent_core.schema import Message
from bot.store.base import (
    ChatEvent,
    ChatView,
    FeedbackRow,
    InboxRow,
    OutboxRow,
    QuestionRow,
    RunRow,
    RunUsage,
    SessionRow,
    SignoffRow,
    StagedInbox,
    StoreClosed,
    StoreCounts,
    SuggestionRow,
    TurnStart,
)
from bot.store.migrate import MIGRATIONS_DIR, Migration, apply_migrations, discover
from bot.store.sqlite import feedback, suggestions, writes
from bot.store.sqlite.reader import SqliteReader, in_snapshot
from bot.store.sqlite.suggestions import SUGGESTION_COLS
from bot.store.sqlite.suggestions import suggestion as suggestion_row
from bot.store.sqlite.writer import GroupCommitWriter
from bot.store.sqlite.writes import OPEN_SIGNOFF, SIGNOFF_COLS

Row = tuple[Any, ...]
_SESSION_COLS = writes.SESSION_COLS
_QUESTION_COLS = writes.QUESTION_COLS
_OUTBOX_COLS = writes.OUTBOX_COLS
_INBOX_COLS = "id, platform, dedup_id, chat_key, body, received_at, kind, noticed"
_PENDING_INBOX = f"SELECT {_INBOX_COLS} FROM inbox WHERE chat_key = ? AND status = 'pending' ORDER BY id LIMIT ?"
_OPEN_SESSION = f"SELECT {_SESSION_COLS} FROM sessions WHERE chat_key = ? AND closed = 0"
_CHAT_QUESTIONS = (
    f"SELECT {', '.join('q.' + c.strip() for c in _QUESTION_COLS.split(','))} FROM questions q "
    "JOIN sessions s ON s.id = q.session_id "
    "WHERE s.chat_key = ? AND s.closed = 0 AND s.state = 'asking' AND q.status = 'waiting' "
    "ORDER BY q.asked_at, q.tool_call_id"
)


class SqliteStore:
    def __init__(self, path: Path | str, *, migrations_dir: Path = MIGRATIONS_DIR) -> None:
        self.path = Path(path)
        self._migrations_dir = migrations_dir
        self._writer = GroupCommitWriter(str(self.path))
        self._reader = SqliteReader(str(self.path))

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The migration runner is synchronous: run it on its own connection before serving.
        await asyncio.to_thread(_migrate_file, str(self.path), discover(self._migrations_dir))
        await self._writer.open()
        await self._reader.open()

    async def close(self) -> None:
        await self._writer.close()
        await self._reader.close()

    async def ping(self) -> bool:
        try:
            await self._all("SELECT 1")
        except (sqlite3.Error, StoreClosed, ValueError):
            return False
        return True

    async def _one(self, sql: str, args: Sequence[object] = ()) -> Row | None:
        rows = await self._all(sql, args)
        return rows[0] if rows else None

    async def _all(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        """A point read (bounded by one chat or one id): inline (bot.store.sqlite.reader)."""
        return self._reader.point_all(sql, args)

    async def _scan(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        """A read over the whole database (start-up, the operator's lists, gauges): on the reader thread."""
        return await self._reader.scan(sql, args)

    async def _scan_one(self, sql: str, args: Sequence[object] = ()) -> Row | None:
        rows = await self._scan(sql, args)
        return rows[0] if rows else None

    # -- inbox -----------------------------------------------------------------------------
    async def add_inbox(self, platform: str, dedup_id: str, chat_key: str, body: str) -> int | None:
        return await self._writer.write(partial(writes.add_inbox, platform=platform, dedup_id=dedup_id,
                                                chat_key=chat_key, body=body))

    async def stage_inbox(self, platform: str, dedup_id: str, chat_key: str, body: str, *,
                          notify: bool = True) -> StagedInbox:
        # one process serves every chat: there is nobody to notify
        received_at = time.time()
        executed, committed = self._writer.write_staged(partial(
            writes.add_inbox, platform=platform, dedup_id=dedup_id, chat_key=chat_key, body=body,
            received_at=received_at))
        try:
            inbox_id = await executed
        except BaseException:
            committed.cancel()  # nobody will wait for it: its outcome is the one just raised
            raise
        return StagedInbox(inbox_id, received_at, committed)

    async def add_events(self, events: Sequence[ChatEvent]) -> None:
        if events:
            await self._writer.write(partial(writes.add_events, events=list(events)))

    async def inbox_for(self, chat_key: str, limit: int = 100) -> list[InboxRow]:
        return [_inbox(r) for r in await self._all(_PENDING_INBOX, (chat_key, limit))]

    async def chat_view(self, chat_key: str, limit: int = 100) -> ChatView:
        rows, session, questions = self._reader.point(
            partial(in_snapshot, fn=partial(_chat_view, chat_key=chat_key, limit=limit)))
        return ChatView(rows, session, questions)

    async def chats_with_inbox(self) -> list[str]:
        rows = await self._scan("SELECT DISTINCT chat_key FROM inbox WHERE status = 'pending'")
        return [r[0] for r in rows]

    async def finish_inbox(self, inbox_id: int, *, drop_earlier: bool = False) -> None:
        await self._writer.write(partial(writes.finish_inbox, inbox_id=inbox_id, drop_earlier=drop_earlier))

    async def fail_inbox(self, inbox_id: int, error: str) -> None:
        await self._writer.write(partial(writes.fail_inbox, inbox_id=inbox_id, error=error))

    async def remember_location(self, chat_key: str, location: str, lang: str) -> None:
        await self._writer.write(partial(writes.remember_location, chat_key=chat_key, location=location, lang=lang))

    # -- sessions --------------------------------------------------------------------------
    async def get_session(self, chat_key: str) -> SessionRow | None:
        row = await self._one(_OPEN_SESSION, (chat_key,))
        return SessionRow(*row) if row else None

    async def start_turn(self, turn: TurnStart) -> SessionRow:
        row = await self._writer.write(partial(writes.start_turn, turn=turn, body=_body(turn.message)))
        return SessionRow(*row)

    async def load_messages(self, session_id: str) -> list[Message]:
        rows = await self._all("SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
        return [Message.model_validate_json(r[0]) for r in rows]

    async def append(
        self, session_id: str, messages: Sequence[Message], *, step: int, inbox_done: Sequence[int] = ()
    ) -> None:
        await self._writer.write(partial(writes.append_step, session_id=session_id, bodies=_bodies(messages), step=step,
                                         inbox_done=list(inbox_done)))

    async def pause(
        self, session_id: str, messages: Sequence[Message], questions: Sequence[QuestionRow], *, step: int,
        inbox_done: Sequence[int] = (), usage: RunUsage | None = None,
    ) -> list[int]:
        rows = [(session_id, q.tool_call_id, q.question, json.dumps(list(q.options), ensure_ascii=False), q.asker_id,
                 q.asked_at, q.deadline, q.remind_at, q.addressee) for q in questions]
        return list(await self._writer.write(partial(writes.pause, session_id=session_id, bodies=_bodies(messages),
                                            questions=rows, step=step, inbox_done=list(inbox_done), usage=usage)))

    async def finish_run(
        self, session_id: str, messages: Sequence[Message], *, outbox: Sequence[tuple[str, str]] = (),
        inbox_done: Sequence[int] = (), signoff: SignoffRow | None = None, usage: RunUsage | None = None,
    ) -> list[int]:
        return list(await self._writer.write(partial(writes.finish_run, session_id=session_id, bodies=_bodies(messages),
                                                     outbox=list(outbox), inbox_done=list(inbox_done),
                                                     signoff=_signoff_row(signoff), usage=usage)))

    async def interrupt(
        self, session_id: str, fillers: Sequence[Message], *, close: bool, notice: str | None = None
    ) -> None:
        await self._writer.write(partial(writes.interrupt, session_id=session_id, bodies=_bodies(fillers), close=close,
                                         notice=notice))

    async def close_session(self, chat_key: str) -> None:
        await self._writer.write(partial(writes.close_session, chat_key=chat_key))

    async def add_usage(self, usage: RunUsage) -> None:
        await self._writer.write(partial(writes.add_usage, usage=usage))

    async def recent_runs(self, limit: int = 50) -> list[RunRow]:
        rows = await self._scan(f"SELECT {writes.RUN_COLS} FROM runs ORDER BY updated_at DESC LIMIT ?", (limit,))
        return [RunRow(*r) for r in rows]

    async def working_sessions(self) -> list[SessionRow]:
        rows = await self._scan(f"SELECT {_SESSION_COLS} FROM sessions WHERE state = 'working' AND closed = 0")
        return [SessionRow(*r) for r in rows]

    async def session_by_id(self, session_id: str) -> SessionRow | None:
        row = await self._one(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,))
        return SessionRow(*row) if row else None

    async def open_sessions(self, limit: int = 100) -> list[SessionRow]:
        rows = await self._scan(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE closed = 0 ORDER BY updated_at DESC LIMIT ?", (limit,)
        )
        return [SessionRow(*r) for r in rows]

    async def failed_deliveries(self, limit: int = 100) -> list[OutboxRow]:
        rows = await self._scan(f"SELECT {_OUTBOX_COLS} FROM outbox WHERE status = 'failed' ORDER BY id DESC LIMIT ?",
                               (limit,))
        return [OutboxRow(*r) for r in rows]

    async def retry_outbox(self, outbox_id: int) -> str | None:
        return await self._writer.write(partial(writes.retry_outbox, outbox_id=outbox_id))

    # -- questions -------------------------------------------------------------------------
    async def get_question(self, session_id: str) -> QuestionRow | None:
        row = await self._one(
            f"SELECT {_QUESTION_COLS} FROM questions WHERE session_id = ? AND status = 'waiting' ORDER BY asked_at LIMIT 1",
            (session_id,),
        )
        return _question(row) if row else None

    async def question_for_chat(self, chat_key: str) -> QuestionRow | None:
        row = await self._one(
            f"SELECT {', '.join('q.' + c.strip() for c in _QUESTION_COLS.split(','))} FROM questions q "
            "JOIN sessions s ON s.id = q.session_id "
            "WHERE s.chat_key = ? AND s.closed = 0 AND s.state = 'asking' AND q.status = 'waiting' "
            "ORDER BY q.asked_at LIMIT 1",
            (chat_key,),
        )
        return _question(row) if row else None

    async def questions_for_chat(self, chat_key: str) -> list[QuestionRow]:
        return [_question(r) for r in await self._all(_CHAT_QUESTIONS, (chat_key,))]

    async def resolve_question(
        self, session_id: str, tool_call_id: str, answer: Message, *, status: str, inbox_id: int | None
    ) -> bool:
        return await self._writer.write(partial(writes.resolve_question, session_id=session_id,
                                                tool_call_id=tool_call_id, body=_body(answer), status=status,
                                                inbox_id=inbox_id))

    async def waiting_questions(self) -> list[QuestionRow]:
        rows = await self._scan(f"SELECT {_QUESTION_COLS} FROM questions WHERE status = 'waiting'")
        return [_question(r) for r in rows]

    async def due_questions(self, now: float) -> list[QuestionRow]:
        rows = await self._scan(
            f"SELECT {_QUESTION_COLS} FROM questions WHERE status = 'waiting' AND deadline <= ? ORDER BY deadline", (now,)
        )
        return [_question(r) for r in rows]

    async def next_deadline(self, after: float = 0.0) -> float | None:
        row = await self._scan_one(
            "SELECT MIN(t) FROM (SELECT deadline AS t FROM questions WHERE status = 'waiting' "
            "UNION ALL SELECT remind_at FROM questions WHERE status = 'waiting' AND remind_at IS NOT NULL "
            f"UNION ALL SELECT CASE WHEN reminded = 0 THEN remind_at ELSE deadline END FROM signoffs WHERE {OPEN_SIGNOFF} "
            f"UNION ALL SELECT deadline FROM signoffs WHERE {OPEN_SIGNOFF}) AS due WHERE t > ?",
            (after,),
        )
        return float(row[0]) if row and row[0] is not None else None

    async def due_reminders(self, now: float) -> list[QuestionRow]:
        rows = await self._scan(
            f"SELECT {_QUESTION_COLS} FROM questions WHERE status = 'waiting' AND remind_at <= ? ORDER BY remind_at",
            (now,),
        )
        return [_question(r) for r in rows]

    async def remind(self, session_id: str, tool_call_id: str, body: str, *, inbox_id: int) -> int | None:
        return await self._writer.write(partial(writes.remind, session_id=session_id, tool_call_id=tool_call_id,
                                                body=body, inbox_id=inbox_id))

    # -- sign-offs -------------------------------------------------------------------------
    async def signoff_for_chat(self, chat_key: str) -> SignoffRow | None:
        row = await self._one(
            f"SELECT {', '.join('g.' + c.strip() for c in SIGNOFF_COLS.split(','))} FROM signoffs g "
            f"JOIN sessions s ON s.id = g.session_id WHERE s.chat_key = ? AND s.closed = 0 "
            "ORDER BY g.requested_at DESC LIMIT 1",
            (chat_key,),
        )
        return _signoff(row) if row else None

    async def decide_signoff(
        self, signoff_id: str, status: str, by: str, *, reason: str | None = None, inbox_id: int | None = None,
        outbox: Sequence[tuple[str, str]] = (),
    ) -> list[int] | None:
        return await self._writer.write(partial(writes.decide_signoff, signoff_id=signoff_id, status=status, by=by,
                                            reason=reason, inbox_id=inbox_id, outbox=list(outbox)))

    async def signoff_reminded(
        self, signoff_id: str, *, inbox_id: int | None, outbox: Sequence[tuple[str, str]] = ()
    ) -> list[int] | None:
        return await self._writer.write(partial(writes.signoff_reminded, signoff_id=signoff_id, inbox_id=inbox_id,
                                            outbox=list(outbox)))

    async def due_signoffs(self, now: float) -> list[SignoffRow]:
        rows = await self._scan(
            f"SELECT {SIGNOFF_COLS} FROM signoffs WHERE {OPEN_SIGNOFF} "
            f"AND ((reminded = 0 AND remind_at <= ?) OR deadline <= ?) ORDER BY deadline",
            (now, now),
        )
        return [_signoff(r) for r in rows]

    async def add_approver(self, platform: str, channel_id: str, user_id: str, added_by: str) -> None:
        await self._writer.write(partial(writes.add_approver, platform=platform, channel_id=channel_id, user_id=user_id,
                                     added_by=added_by))

    # -- suggestions (bot.chat.suggestions) --------------------------------------------------
    async def add_suggestion(self, suggestion: SuggestionRow, *, inbox_id: int,
                             outbox: Sequence[tuple[str, str]] = ()) -> list[int]:
        return await self._writer.write(partial(suggestions.add_suggestion, suggestion=suggestion, inbox_id=inbox_id,
                                              outbox=list(outbox)))

    async def get_suggestion(self, suggestion_id: str) -> SuggestionRow | None:
        row = await self._one(f"SELECT {SUGGESTION_COLS} FROM suggestions WHERE id = ?", (suggestion_id,))
        return suggestion_row(row) if row else None

    async def decide_suggestion(
        self, suggestion_id: str, status: str, by: str, *, inbox_id: int | None,
        adopted: ChatEvent | None = None, outbox: Sequence[tuple[str, str]] = (),
    ) -> list[int] | None:
        return await self._writer.write(partial(suggestions.decide_suggestion, suggestion_id=suggestion_id, status=status,
                                              by=by, inbox_id=inbox_id, adopted=adopted, outbox=list(outbox)))

    async def channel_approvers(self, platform: str, channel_id: str) -> list[str]:
        rows = await self._all(
            "SELECT user_id FROM channel_approvers WHERE platform = ? AND channel_id = ? ORDER BY added_at",
            (platform, channel_id,),
        )
        return [str(r[0]) for r in rows]

    async def record_feedback(self, chat_key: str, session_id: str, run_no: int, user_id: str, rating: str,
                              at: float) -> bool:
        return await self._writer.write(partial(feedback.record_feedback, chat_key=chat_key, session_id=session_id,
                                                run_no=run_no, user_id=user_id, rating=rating, at=at))

    async def recent_feedback(self, limit: int = 100) -> list[FeedbackRow]:
        return [FeedbackRow(*r) for r in await self._scan(feedback.RECENT, (limit,))]

    # -- outbox ----------------------------------------------------------------------------
    async def queue_outbox(self, chat_key: str, session_id: str, kind: str, body: str) -> int:
        return int(await self._writer.write(partial(writes.queue_outbox, chat_key=chat_key, session_id=session_id,
                                                    kind=kind, body=body)))

    async def notice_inbox(self, inbox_id: int, chat_key: str, session_id: str, body: str) -> int:
        return int(await self._writer.write(partial(writes.notice_inbox, inbox_id=inbox_id, chat_key=chat_key,
                                                    session_id=session_id, body=body)))

    async def pending_outbox(self, chat_key: str | None = None) -> list[OutboxRow]:
        if chat_key is None:
            rows = await self._scan(f"SELECT {_OUTBOX_COLS} FROM outbox WHERE status = 'pending' ORDER BY id")
        else:
            rows = await self._all(
                f"SELECT {_OUTBOX_COLS} FROM outbox WHERE status = 'pending' AND chat_key = ? ORDER BY id", (chat_key,)
            )
        return [OutboxRow(*r) for r in rows]

    async def chats_with_outbox(self) -> list[str]:
        rows = await self._scan("SELECT chat_key FROM outbox WHERE status = 'pending' GROUP BY chat_key ORDER BY MIN(id)")
        return [r[0] for r in rows]

    async def failed_outbox(self, chat_key: str) -> list[OutboxRow]:
        rows = await self._all(
            f"SELECT {_OUTBOX_COLS} FROM outbox WHERE status = 'failed' AND chat_key = ? ORDER BY id", (chat_key,)
        )
        return [OutboxRow(*r) for r in rows]

    async def outbox_part_sent(self, outbox_id: int, parts_sent: int, message_id: str) -> None:
        await self._writer.write(partial(writes.outbox_part_sent, outbox_id=outbox_id, parts_sent=parts_sent,
                                         message_id=message_id))

    async def question_watermark(self) -> int | None:
        return None  # one writer: the posting's record is ordered after every update stored before it

    async def outbox_sent(self, outbox_id: int, parts_sent: int, message_id: str | None,
                          posted_after: int | None = None) -> None:
        await self._writer.write(partial(writes.outbox_sent, outbox_id=outbox_id, parts_sent=parts_sent,
                                         message_id=message_id))

    async def outbox_attempt_failed(self, outbox_id: int, error: str) -> None:
        await self._writer.write(partial(writes.outbox_attempt_failed, outbox_id=outbox_id, error=error))

    async def outbox_failed(self, outbox_id: int, error: str) -> None:
        await self._writer.write(partial(writes.outbox_failed, outbox_id=outbox_id, error=error))

    async def counts(self) -> StoreCounts:
        row = await self._scan_one(
            "SELECT (SELECT COUNT(*) FROM questions WHERE status = 'waiting'), "
            "(SELECT COUNT(*) FROM sessions WHERE state = 'asking' AND closed = 0), "
            "(SELECT COUNT(*) FROM outbox WHERE status = 'pending'), "
            "(SELECT COUNT(*) FROM outbox WHERE status = 'failed'), "
            "(SELECT COUNT(*) FROM inbox WHERE status = 'pending')"
        )
        assert row is not None
        return StoreCounts(*(int(v) for v in row))


def _body(message: Message) -> str:
    return message.model_dump_json(exclude_none=True)


def _bodies(messages: Sequence[Message]) -> list[str]:
    return [_body(m) for m in messages]


def _signoff_row(signoff: SignoffRow | None) -> tuple[object, ...] | None:
    if signoff is None:
        return None
    g = signoff
    return (g.id, g.session_id, g.chat_key, g.status, json.dumps(list(g.approvers), ensure_ascii=False),
            g.requested_at, g.remind_at, g.deadline, int(g.reminded), g.decided_by, g.decided_at, g.reason)


def _signoff(row: Sequence[object]) -> SignoffRow:
    values = list(row)
    values[4] = tuple(json.loads(str(values[4])))
    values[8] = bool(values[8])
    return SignoffRow(*values)  # type: ignore[arg-type]


def _inbox(r: Sequence[Any]) -> InboxRow:
    return InboxRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]))


def _chat_view(conn: sqlite3.Connection, chat_key: str, limit: int
               ) -> tuple[list[InboxRow], SessionRow | None, list[QuestionRow]]:
    rows = [_inbox(r) for r in conn.execute(_PENDING_INBOX, (chat_key, limit))]
    found = conn.execute(_OPEN_SESSION, (chat_key,)).fetchone()
    session = SessionRow(*found) if found else None
    asking = session is not None and session.state == "asking"
    questions = [_question(r) for r in conn.execute(_CHAT_QUESTIONS, (chat_key,))] if asking else []
    return rows, session, questions


def _question(row: Sequence[object]) -> QuestionRow:
    values = list(row)
    values[3] = tuple(json.loads(str(values[3])))
    return QuestionRow(*values)  # type: ignore[arg-type]


def _migrate_file(path: str, migrations: list[Migration]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        apply_migrations(conn, migrations)
    finally:
        conn.close()
