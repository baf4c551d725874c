"""WebAdapter: the web chat surface (platform "web"); its HTTP routes are in adapters.web.routes.

A browser session id is the chat: ChatKey("web", session_id, ""), and also the user id. The
runtime's surface calls become events in that session's log (adapters.web.log); the page reads
them over SSE and can reconnect with Last-Event-ID without losing any. The run never depends on
a connection: a page that goes away mid-run finds the answer in the log (or in the history)
when it comes back.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter
from pydantic import BaseModel

from adapters.web.auth import WebAuth
from adapters.web.log import EventLogBook, SessionLog
from adapters.web.payloads import (
    ErrorData,
    FileData,
    NoticeData,
    QuestionData,
)
from adapters.web.relay import Relay, SharedEvents
from adapters.web.render import answer_data, file_url, progress_data, verdict_data
from adapters.web.routes import WebRoutes
from adapters.web.runtime import SessionApi
from adapters.web.session_reads import PLATFORM, SessionReads
from adapters.web.static_files import StaticFiles
from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    Verdict,
)
from bot.settings import Settings
from bot.surface import (
    Attachment,
    ChatKey,
    Notice,
    PartLog,
    RunInfo,
)

log = logging.getLogger(__name__)


class WebAdapter:
    platform = PLATFORM
    # no sign-off here: its one user id is the session id, which the client picks, so no web
    # user can be known to be an approver (bot.chat.machine, `signable`)
    signs_off = False

    def __init__(
        self,
        settings: Settings,
        manager: SessionApi,
        *,
        keepalive_s: float = 15.0,
        retry_ms: int = 2000,
        max_sessions: int = 5000,
        max_events: int = 500,
        shared: SharedEvents | None = None,
    ) -> None:
        self._settings = settings
        self._manager = manager
        self._book = EventLogBook(max_sessions=max_sessions, max_events=max_events)
        # several processes (PostgreSQL): events travel between them (adapters.web.relay)
        self._relay = Relay(shared, self._book) if shared is not None else None
        static = StaticFiles()
        self._running = False
        if settings.web_token is None and not settings.host_is_loopback:
            raise ValueError(f"BOT_WEB_TOKEN is required when BOT_HOST={settings.host} is not loopback")
        reads = SessionReads(manager, self._book, self._relay, timezone=settings.timezone,
                             keepalive_s=keepalive_s, retry_ms=retry_ms, running=lambda: self._running)
        self._routes = WebRoutes(manager, self._book, reads, WebAuth(settings.web_token), static)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._relay is not None:
            await self._relay.start()
        self._running = True

    async def stop(self) -> None:
        """End every open event stream so the HTTP server can shut down promptly."""
        self._running = False
        self._book.close_all()
        if self._relay is not None:
            await self._relay.stop()

    async def healthy(self) -> bool:
        return self._running

    def log_for(self, session_id: str) -> SessionLog:
        """The session's event log (tests and benchmarks read ids and timings from it)."""
        return self._book.get(session_id)

    # ------------------------------------------------------------------ Surface

    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        data = progress_data(event, run.run, run.lang)
        if data is not None:
            self._emit(chat, *data)

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        data = QuestionData(
            question=question.question,
            session_id=chat.chat_id,
            tool_call_id=question.tool_call_id,
            options=list(question.options) or None,
        )
        await parts.sent(self._emit(chat, "human_input_request", data), more=False)

    async def post_answer(
        self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo, parts: PartLog
    ) -> None:
        # the answer and its verdict are two parts: a retry after the first never repeats it
        if parts.done < 1:
            data = answer_data(answer, run.lang)
            if run.run:  # what a plan's thumbs up / down rate; a reload's stream knows the answer by it
                data = data.model_copy(update={"run": run.run})
            await parts.sent(self._emit(chat, "answer", data), more=verdict is not None)
        if verdict is not None and parts.done < 2:
            await parts.sent(self._emit(chat, "verdict", verdict_data(verdict, run.run)), more=False)

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        if notice.kind == "limited":  # the 429 that refused the message says it, with its Retry-After
            return
        if notice.kind == "error":
            event_id = self._emit(chat, "error", ErrorData(message=notice.text))
        else:
            event_id = self._emit(chat, "notice", NoticeData(kind=notice.kind, text=notice.text))
        await parts.sent(event_id, more=False)

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        return None  # a web session is one person's

    async def post_file(self, chat: ChatKey, file: Attachment, parts: PartLog) -> None:
        # the page gets a link naming this very file: its outbox row keeps it for the download
        url = file_url(chat.chat_id, file.filename, file.content)
        await parts.sent(self._emit(chat, "file", FileData(filename=file.filename, title=file.title, url=url)),
                         more=False)

    def _emit(self, chat: ChatKey, event: str, data: BaseModel) -> str:
        logged = self._book.get(chat.chat_id).append(event, data.model_dump_json(exclude_none=True))
        if self._relay is not None:
            self._relay.produced(chat.chat_id, event, logged.data)
        return logged.id

    # ------------------------------------------------------------------ HTTP

    def router(self) -> APIRouter:
        return self._routes.router()
