"""The store protocol: every state change that matters is one method, one transaction.

Its rows and records are bot.store.rows', its errors bot.store.errors' (both named here too, as
every caller imports them from this module). Two implementations: bot.store.sqlite (one
process) and bot.store.postgres (several); their reads and the records of their writes are
written once, in bot.store.reads and bot.store.writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agent_core.schema import Message
from bot.store.errors import LeaseLost, StoreClosed, StoreError, StoreUnavailable
from bot.store.rows import (
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
    StoreCounts,
    SuggestionRow,
    TurnStart,
)

__all__ = [
    "ChatEvent", "ChatView", "FeedbackRow", "InboxRow", "LeaseLost", "OutboxRow", "QuestionRow", "RunRow", "RunUsage",
    "SessionLock", "SessionRow", "SignoffRow", "Store", "StoreClosed", "StoreCounts", "StoreError", "StoreUnavailable",
    "SuggestionRow", "TurnStart",
]


class SessionLock(Protocol):
    """A lock held by one process of several while its connection lives (PostgreSQL's session
    advisory lock): the Telegram poller runs only while it holds it."""

    async def acquire(self) -> None:
        """Return once held (waiting as long as another process holds it)."""

    async def wait_lost(self) -> None:
        """Return when the lock is no longer held (its connection was lost)."""

    async def release(self) -> None: ...


class Store(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def ping(self) -> bool: ...

    # the inbox: every message and every event of a chat, durable before anything acts on it
    async def add_inbox(self, platform: str, dedup_id: str, chat_key: str, body: str, *,
                        notify: bool = True) -> int | None:
        """Store an incoming update, returning once it is committed; None when (platform,
        dedup_id) was seen before. `notify=False`: the caller runs the chat itself, so other
        processes are not woken (PostgreSQL sends no NOTIFY)."""
    async def add_events(self, events: Sequence[ChatEvent]) -> None:
        """Store events for their chats' tasks, in one transaction (duplicates are dropped)."""
    async def inbox_for(self, chat_key: str, limit: int = 100) -> list[InboxRow]:
        """The chat's pending rows, oldest first."""
    async def chat_view(self, chat_key: str, limit: int = 100) -> ChatView:
        """The chat's pending rows, its session and waiting questions, read at once."""
    async def chats_with_inbox(self) -> list[str]: ...
    async def finish_inbox(self, inbox_id: int, *, drop_earlier: bool = False) -> None: ...
    async def fail_inbox(self, inbox_id: int, error: str) -> None:
        """Set a row aside that could not be handled (it stays, with the reason, for the operator)."""

    # sessions and runs
    async def get_session(self, chat_key: str) -> SessionRow | None: ...
    async def start_turn(self, turn: TurnStart) -> SessionRow:
        """Create the chat's session if needed, append the user message, mark it working, close the inbox row."""
    async def load_messages(self, session_id: str) -> list[Message]: ...
    async def append(
        self, session_id: str, messages: Sequence[Message], *, step: int, inbox_done: Sequence[int] = ()
    ) -> None:
        """Append a step's messages; `inbox_done` (messages that steered it) close in the same transaction."""
    async def pause(
        self, session_id: str, messages: Sequence[Message], questions: Sequence[QuestionRow], *,
        postings: Sequence[str], step: int, inbox_done: Sequence[int] = (), usage: RunUsage | None = None,
    ) -> list[int]:
        """Append, store the questions (several when a turn asks several people at once, each
        waiting and not yet posted) and queue their postings (`postings`: each question's outbox
        body, in the same order; the outbox rows are returned in that order), mark the session
        asking, and add the segment's `usage` when given (as add_usage does): one transaction."""
    async def remember_location(self, chat_key: str, location: str, lang: str) -> None: ...
    async def close_session(self, chat_key: str) -> None: ...
    async def session_by_id(self, session_id: str) -> SessionRow | None: ...
    async def finish_run(
        self, session_id: str, messages: Sequence[Message], *, outbox: Sequence[tuple[str, str]] = (),
        inbox_done: Sequence[int] = (), signoff: SignoffRow | None = None, usage: RunUsage | None = None,
    ) -> list[int]:
        """Mark the run over (idle, or waiting for `signoff` when given, which is stored), queue
        what must be delivered, `(kind, body)` each, and add the segment's `usage` when given (as
        add_usage does): one transaction."""
    async def interrupt(
        self, session_id: str, fillers: Sequence[Message], *, close: bool, notice: str | None = None
    ) -> None:
        """Stop a run: answer its open tool calls with `fillers`, cancel its question, idle (or
        close) it, and queue `notice` (a body) when given: one transaction."""
    async def add_usage(self, usage: RunUsage) -> None:
        """Add a segment's usage to its session's totals and to its run's row (created by the
        run's first segment), one transaction."""
    async def recent_runs(self, limit: int = 50) -> list[RunRow]:
        """The runs most recently changed, newest first."""

    # the operator's page (bot.http.admin)
    async def open_sessions(self, limit: int = 100) -> list[SessionRow]:
        """Open sessions, the most recently changed first."""
    async def failed_deliveries(self, limit: int = 100) -> list[OutboxRow]:
        """Outbox rows given up on, in every chat, newest first."""
    async def retry_outbox(self, outbox_id: int) -> str | None:
        """Put a failed answer or notice back in the queue (attempts from zero, the parts already
        sent stay sent); its chat key, or None when it is not a failed row of those kinds (a
        failed question stopped its run: posting it later would ask what nobody waits for)."""
    async def working_sessions(self) -> list[SessionRow]: ...

    # questions
    async def get_question(self, session_id: str) -> QuestionRow | None:
        """The waiting question of a session, if any."""
    async def question_for_chat(self, chat_key: str) -> QuestionRow | None:
        """The first waiting question of the chat's open session, in one read."""
    async def questions_for_chat(self, chat_key: str) -> list[QuestionRow]:
        """Every waiting question of the chat's open session, in the order they were asked."""
    async def resolve_question(
        self, session_id: str, tool_call_id: str, answer: Message, *, status: str, inbox_id: int | None
    ) -> bool:
        """Store the answer as the tool result and close the question (and the inbox row) in one
        transaction; the session goes back to working once no other question of it waits. False
        when the question was no longer waiting."""
    async def waiting_questions(self) -> list[QuestionRow]: ...
    async def due_questions(self, now: float) -> list[QuestionRow]: ...
    async def due_reminders(self, now: float) -> list[QuestionRow]:
        """Waiting questions whose reminder is due by `now` and not yet sent."""
    async def remind(self, session_id: str, tool_call_id: str, body: str, *, inbox_id: int) -> int | None:
        """Mark the question's reminder sent and queue it (`body`, an outbox row of kind
        `reminder`) and finish the inbox row, in one transaction; the row's id, or None (nothing
        queued) when the question no longer waits or was reminded already."""
    async def next_deadline(self, after: float = 0.0) -> float | None:
        """The earliest deadline of a waiting question, or reminder or deadline of an open
        sign-off, or reminder time of a waiting question, later than `after`."""

    # sign-offs of team plans, and the approvers a channel named
    async def signoff_for_chat(self, chat_key: str) -> SignoffRow | None:
        """The latest sign-off of the chat's open session (open or decided)."""
    async def decide_signoff(
        self, signoff_id: str, status: str, by: str, *, reason: str | None = None, inbox_id: int | None = None,
        outbox: Sequence[tuple[str, str]] = (),
    ) -> list[int] | None:
        """Record a decision (approved, rejecting, expired) on an open sign-off; approved and
        expired leave the session idle. Closes the inbox row and queues `outbox`, one transaction;
        None when the sign-off was no longer open."""
    async def signoff_reminded(
        self, signoff_id: str, *, inbox_id: int | None, outbox: Sequence[tuple[str, str]] = ()
    ) -> list[int] | None:
        """Mark its one reminder sent and queue it; None when it was reminded or closed already."""
    async def due_signoffs(self, now: float) -> list[SignoffRow]:
        """Open sign-offs whose reminder or deadline is due."""
    async def add_approver(self, platform: str, channel_id: str, user_id: str, added_by: str) -> None: ...
    async def channel_approvers(self, platform: str, channel_id: str) -> list[str]: ...

    # suggestions: messages kept until the person who may make their change decides (bot.chat.suggestions)
    async def add_suggestion(self, suggestion: SuggestionRow, *, inbox_id: int,
                             outbox: Sequence[tuple[str, str]] = ()) -> list[int]:
        """Keep the suggestion, close the inbox row it came in, queue `outbox`: one transaction."""
    async def get_suggestion(self, suggestion_id: str) -> SuggestionRow | None: ...
    async def decide_suggestion(
        self, suggestion_id: str, status: str, by: str, *, inbox_id: int | None,
        adopted: ChatEvent | None = None, outbox: Sequence[tuple[str, str]] = (),
    ) -> list[int] | None:
        """Record Yes (`accepted`, with `adopted`: the suggestion as a message the chat applies next,
        written to its inbox) or No (`declined`) on a waiting suggestion; close the press's inbox
        row and queue `outbox`, one transaction. None when it was no longer waiting."""

    # 👍 / 👎 under plans, stored with their run
    async def record_feedback(self, chat_key: str, session_id: str, run_no: int, user_id: str, rating: str,
                              at: float) -> bool:
        """Keep the person's rating of the run (their latest press replaces an earlier one); False,
        nothing written, when the chat has no such run on record."""
    async def recent_feedback(self, limit: int = 100) -> list[FeedbackRow]:
        """The latest ratings, newest first."""
    async def session_feedback(self, session_id: str) -> list[FeedbackRow]:
        """Every rating of the session's runs (each person's latest), by run (a page that reloads
        shows a rating already given)."""

    # the outbox: what must arrive, delivered in order per chat by the delivery worker
    async def queue_outbox(self, chat_key: str, session_id: str, kind: str, body: str) -> int: ...
    async def notice_inbox(self, inbox_id: int, chat_key: str, session_id: str, body: str) -> int:
        """Mark the pending row noticed and queue its notice, in one transaction; the outbox id."""
        ...
    async def pending_outbox(self, chat_key: str | None = None) -> list[OutboxRow]: ...
    async def chats_with_outbox(self) -> list[str]: ...
    async def failed_outbox(self, chat_key: str) -> list[OutboxRow]: ...
    async def sent_outbox(self, session_id: str) -> list[OutboxRow]:
        """What the session delivered, in order (a page that reloads shows an answer's review and
        files again, after a restart too)."""
    async def outbox_part_sent(self, outbox_id: int, parts_sent: int, message_id: str) -> None: ...
    async def record_watermark(self, outbox_id: int) -> int | None:
        """Before a question's posting attempt: its watermark (the newest inbox id now), recorded
        at the first attempt and returned unchanged at every later one (a retry, a re-post after a
        restart or a takeover), so an answer given once the question could be seen stays above it;
        an attempt that failed clears it (outbox_attempt_failed), so the next records its own.
        Committed before the platform is called: an answer any process stores afterwards lands
        above it. None when the row posts no question."""
    async def outbox_sent(self, outbox_id: int, parts_sent: int, message_id: str | None,
                          posted_after: int | None = None) -> None:
        """Delivered: a question row also marks its question posted, with its watermark (the one
        record_watermark recorded; else `posted_after`; else the newest inbox id at this write)."""
    async def outbox_attempt_failed(self, outbox_id: int, error: str) -> None: ...
    async def outbox_failed(self, outbox_id: int, error: str) -> None:
        """Given up: a question row also tells its chat (an `undeliverable` event), same transaction."""
    async def counts(self) -> StoreCounts: ...
