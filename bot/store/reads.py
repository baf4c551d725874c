"""The store's reads, written once for both databases.

Each read is one SQL query both SQLite and PostgreSQL run as written (placeholders `$1, $2, ...`:
PostgreSQL's own; SqliteStore runs them as `?1, ?2, ...`), and builds its rows with
bot.store.rows.loaded. A store provides the one primitive, abstract here, `_rows(sql, *args, scan=...)`:
`scan` marks a read whose time grows with the database (start-up, the operator's lists, the
gauges), which SQLite runs off the event loop. The chat's view (`chat_view`) is each store's own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from agent_core.schema import Message
from bot.store.rows import (
    FeedbackRow,
    InboxRow,
    OutboxRow,
    QuestionRow,
    RunRow,
    SessionRow,
    SignoffRow,
    StoreCounts,
    SuggestionRow,
    columns,
    loaded,
)

Row = tuple[Any, ...]
OPEN_SIGNOFF = "status IN ('waiting', 'rejecting')"
PENDING_INBOX = (f"SELECT {columns(InboxRow)} FROM inbox WHERE chat_key = $1 AND status = 'pending' "
                 "ORDER BY id LIMIT $2")
OPEN_SESSION = f"SELECT {columns(SessionRow)} FROM sessions WHERE chat_key = $1 AND closed = 0"
CHAT_QUESTIONS = (
    f"SELECT {columns(QuestionRow, 'q')} FROM questions q JOIN sessions s ON s.id = q.session_id "
    "WHERE s.chat_key = $1 AND s.closed = 0 AND s.state = 'asking' AND q.status = 'waiting' "
    "ORDER BY q.asked_at, q.tool_call_id"
)
_WAITING = f"SELECT {columns(QuestionRow)} FROM questions WHERE status = 'waiting'"
_OUTBOX = f"SELECT {columns(OutboxRow)} FROM outbox"


class StoreReads(ABC):
    @abstractmethod
    async def _rows(self, sql: str, *args: object, scan: bool = False) -> list[Row]:
        """The store's one read: `sql` run with `args`, its rows as tuples."""

    async def _row(self, sql: str, *args: object, scan: bool = False) -> Row | None:
        rows = await self._rows(sql, *args, scan=scan)
        return rows[0] if rows else None

    # -- inbox -----------------------------------------------------------------------------
    async def inbox_for(self, chat_key: str, limit: int = 100) -> list[InboxRow]:
        return [loaded(InboxRow, r) for r in await self._rows(PENDING_INBOX, chat_key, limit)]

    async def chats_with_inbox(self) -> list[str]:
        return [r[0] for r in await self._rows("SELECT DISTINCT chat_key FROM inbox WHERE status = 'pending'",
                                               scan=True)]

    # -- sessions and runs -----------------------------------------------------------------
    async def get_session(self, chat_key: str) -> SessionRow | None:
        row = await self._row(OPEN_SESSION, chat_key)
        return loaded(SessionRow, row) if row else None

    async def session_by_id(self, session_id: str) -> SessionRow | None:
        row = await self._row(f"SELECT {columns(SessionRow)} FROM sessions WHERE id = $1", session_id)
        return loaded(SessionRow, row) if row else None

    async def load_messages(self, session_id: str) -> list[Message]:
        rows = await self._rows("SELECT body FROM messages WHERE session_id = $1 ORDER BY seq", session_id)
        return [Message.model_validate_json(r[0]) for r in rows]

    async def working_sessions(self) -> list[SessionRow]:
        rows = await self._rows(f"SELECT {columns(SessionRow)} FROM sessions WHERE state = 'working' AND closed = 0",
                                scan=True)
        return [loaded(SessionRow, r) for r in rows]

    async def open_sessions(self, limit: int = 100) -> list[SessionRow]:
        rows = await self._rows(
            f"SELECT {columns(SessionRow)} FROM sessions WHERE closed = 0 ORDER BY updated_at DESC LIMIT $1", limit,
            scan=True)
        return [loaded(SessionRow, r) for r in rows]

    async def recent_runs(self, limit: int = 50) -> list[RunRow]:
        rows = await self._rows(f"SELECT {columns(RunRow)} FROM runs ORDER BY updated_at DESC LIMIT $1", limit,
                                scan=True)
        return [loaded(RunRow, r) for r in rows]

    # -- questions -------------------------------------------------------------------------
    async def get_question(self, session_id: str) -> QuestionRow | None:
        row = await self._row(f"{_WAITING} AND session_id = $1 ORDER BY asked_at LIMIT 1", session_id)
        return loaded(QuestionRow, row) if row else None

    async def question_for_chat(self, chat_key: str) -> QuestionRow | None:
        row = await self._row(f"{CHAT_QUESTIONS} LIMIT 1", chat_key)
        return loaded(QuestionRow, row) if row else None

    async def questions_for_chat(self, chat_key: str) -> list[QuestionRow]:
        return [loaded(QuestionRow, r) for r in await self._rows(CHAT_QUESTIONS, chat_key)]

    async def waiting_questions(self) -> list[QuestionRow]:
        return [loaded(QuestionRow, r) for r in await self._rows(_WAITING, scan=True)]

    async def due_questions(self, now: float) -> list[QuestionRow]:
        rows = await self._rows(f"{_WAITING} AND deadline <= $1 ORDER BY deadline", float(now), scan=True)
        return [loaded(QuestionRow, r) for r in rows]

    async def due_reminders(self, now: float) -> list[QuestionRow]:
        rows = await self._rows(f"{_WAITING} AND remind_at <= $1 ORDER BY remind_at", float(now), scan=True)
        return [loaded(QuestionRow, r) for r in rows]

    async def next_deadline(self, after: float = 0.0) -> float | None:
        row = await self._row(
            "SELECT MIN(t) FROM (SELECT deadline AS t FROM questions WHERE status = 'waiting' "
            "UNION ALL SELECT remind_at FROM questions WHERE status = 'waiting' AND remind_at IS NOT NULL "
            f"UNION ALL SELECT CASE WHEN reminded = 0 THEN remind_at ELSE deadline END FROM signoffs WHERE {OPEN_SIGNOFF} "
            f"UNION ALL SELECT deadline FROM signoffs WHERE {OPEN_SIGNOFF}) AS due WHERE t > $1",
            float(after), scan=True,
        )
        return float(row[0]) if row and row[0] is not None else None

    # -- sign-offs -------------------------------------------------------------------------
    async def signoff_for_chat(self, chat_key: str) -> SignoffRow | None:
        row = await self._row(
            f"SELECT {columns(SignoffRow, 'g')} FROM signoffs g JOIN sessions s ON s.id = g.session_id "
            "WHERE s.chat_key = $1 AND s.closed = 0 ORDER BY g.requested_at DESC LIMIT 1",
            chat_key,
        )
        return loaded(SignoffRow, row) if row else None

    async def due_signoffs(self, now: float) -> list[SignoffRow]:
        rows = await self._rows(
            f"SELECT {columns(SignoffRow)} FROM signoffs WHERE {OPEN_SIGNOFF} "
            "AND ((reminded = 0 AND remind_at <= $1) OR deadline <= $1) ORDER BY deadline",
            float(now), scan=True,
        )
        return [loaded(SignoffRow, r) for r in rows]

    async def get_suggestion(self, suggestion_id: str) -> SuggestionRow | None:
        row = await self._row(f"SELECT {columns(SuggestionRow)} FROM suggestions WHERE id = $1", suggestion_id)
        return loaded(SuggestionRow, row) if row else None

    async def recent_feedback(self, limit: int = 100) -> list[FeedbackRow]:
        rows = await self._rows(
            "SELECT f.session_id, f.run_no, r.chat_key, f.user_id, f.rating, f.at FROM run_feedback f "
            "JOIN runs r ON r.session_id = f.session_id AND r.run_no = f.run_no ORDER BY f.at DESC LIMIT $1",
            limit, scan=True)
        return [loaded(FeedbackRow, r) for r in rows]

    async def session_feedback(self, session_id: str) -> list[FeedbackRow]:
        rows = await self._rows(
            "SELECT f.session_id, f.run_no, r.chat_key, f.user_id, f.rating, f.at FROM run_feedback f "
            "JOIN runs r ON r.session_id = f.session_id AND r.run_no = f.run_no WHERE f.session_id = $1 "
            "ORDER BY f.run_no, f.at", session_id)
        return [loaded(FeedbackRow, r) for r in rows]

    async def channel_approvers(self, platform: str, channel_id: str) -> list[str]:
        rows = await self._rows(
            "SELECT user_id FROM channel_approvers WHERE platform = $1 AND channel_id = $2 ORDER BY added_at",
            platform, channel_id,
        )
        return [str(r[0]) for r in rows]

    # -- the outbox ------------------------------------------------------------------------
    async def pending_outbox(self, chat_key: str | None = None) -> list[OutboxRow]:
        if chat_key is None:
            rows = await self._rows(f"{_OUTBOX} WHERE status = 'pending' ORDER BY id", scan=True)
        else:
            rows = await self._rows(f"{_OUTBOX} WHERE status = 'pending' AND chat_key = $1 ORDER BY id", chat_key)
        return [loaded(OutboxRow, r) for r in rows]

    async def chats_with_outbox(self) -> list[str]:
        rows = await self._rows(
            "SELECT chat_key FROM outbox WHERE status = 'pending' GROUP BY chat_key ORDER BY MIN(id)", scan=True)
        return [r[0] for r in rows]

    async def failed_outbox(self, chat_key: str) -> list[OutboxRow]:
        rows = await self._rows(f"{_OUTBOX} WHERE status = 'failed' AND chat_key = $1 ORDER BY id", chat_key)
        return [loaded(OutboxRow, r) for r in rows]

    async def sent_outbox(self, session_id: str) -> list[OutboxRow]:
        rows = await self._rows(f"{_OUTBOX} WHERE session_id = $1 AND status = 'sent' ORDER BY id", session_id)
        return [loaded(OutboxRow, r) for r in rows]

    async def failed_deliveries(self, limit: int = 100) -> list[OutboxRow]:
        rows = await self._rows(f"{_OUTBOX} WHERE status = 'failed' ORDER BY id DESC LIMIT $1", limit, scan=True)
        return [loaded(OutboxRow, r) for r in rows]

    async def counts(self) -> StoreCounts:
        row = await self._row(
            "SELECT (SELECT COUNT(*) FROM questions WHERE status = 'waiting'), "
            "(SELECT COUNT(*) FROM sessions WHERE state = 'asking' AND closed = 0), "
            "(SELECT COUNT(*) FROM outbox WHERE status = 'pending'), "
            "(SELECT COUNT(*) FROM outbox WHERE status = 'failed'), "
            "(SELECT COUNT(*) FROM inbox WHERE status = 'pending')",
            scan=True,
        )
        assert row is not None
        return StoreCounts(*(int(v) for v in row))
