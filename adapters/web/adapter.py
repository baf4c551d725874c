"""WebAdapter: the web chat surface (platform "web") and its HTTP routes.

A browser session id is the chat: ChatKey("web", session_id, ""), and also the user id. The
runtime's surface calls become events in that session's log (adapters.web.log); the page reads
them over SSE and can reconnect with Last-Event-ID without losing any. The run never depends on
a connection: a page that goes away mid-run finds the answer in the log (or in the history)
when it comes back.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Header, HTTPException, Query
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse
from pydantic import BaseModel
from sse_starlette import EventSourceResponse, ServerSentEvent

from adapters.web.log import EventLogBook, SessionLog
from adapters.web.payloads import (
    SESSION_ID_PATTERN,
    AnswerData,
    ChatRequest,
    ChatResponse,
    ErrorData,
    HistoryEntryOut,
    HumanResponseAck,
    HumanResponseRequest,
    NoticeData,
    PendingOut,
    QuestionData,
    ResetData,
    SessionView,
)
from adapters.web.render import progress_data, verdict_data
from adapters.web.runtime import SessionApi
from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    Verdict,
)
from bot.chat import ChatKey, IncomingMessage, MessageKind, Notice, PartLog, RunInfo, SubmitOutcome
from bot.settings import Settings
from tools.base import SharedLocation

log = logging.getLogger(__name__)

PLATFORM = "web"
STATIC_DIR = Path(__file__).parent / "static"
# One file, inline script and style; nothing may come from elsewhere.
PAGE_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

SessionIdPath = Annotated[str, PathParam(pattern=SESSION_ID_PATTERN)]


class WebAdapter:
    platform = PLATFORM

    def __init__(
        self,
        settings: Settings,
        manager: SessionApi,
        *,
        keepalive_s: float = 15.0,
        retry_ms: int = 2000,
        max_sessions: int = 5000,
        max_events: int = 500,
    ) -> None:
        self._settings = settings
        self._manager = manager
        self._keepalive_s = keepalive_s
        self._retry_ms = retry_ms
        self._book = EventLogBook(max_sessions=max_sessions, max_events=max_events)
        self._page = (STATIC_DIR / "index.html").read_bytes()
        self._running = False

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._running = True

    async def stop(self) -> None:
        """End every open event stream so the HTTP server can shut down promptly."""
        self._running = False
        self._book.close_all()

    async def healthy(self) -> bool:
        return self._running

    def log_for(self, session_id: str) -> SessionLog:
        """The session's event log (tests and benchmarks read ids and timings from it)."""
        return self._book.get(session_id)

    # ------------------------------------------------------------------ Surface

    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        data = progress_data(event)
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
            await parts.sent(self._emit(chat, "answer", AnswerData(text=answer.text, plan=answer.plan)),
                             more=verdict is not None)
        if verdict is not None and parts.done < 2:
            await parts.sent(self._emit(chat, "verdict", verdict_data(verdict)), more=False)

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        if notice.kind == "error":
            event_id = self._emit(chat, "error", ErrorData(message=notice.text))
        else:
            event_id = self._emit(chat, "notice", NoticeData(kind=notice.kind, text=notice.text))
        await parts.sent(event_id, more=False)

    def _emit(self, chat: ChatKey, event: str, data: BaseModel) -> str:
        logged = self._book.get(chat.chat_id).append(event, data.model_dump_json(exclude_none=True))
        return logged.id

    # ------------------------------------------------------------------ HTTP

    def router(self) -> APIRouter:
        r = APIRouter()
        r.add_api_route("/", self._index, methods=["GET"], include_in_schema=False)
        r.add_api_route("/api/chat", self._chat, methods=["POST"], response_model=ChatResponse)
        r.add_api_route(
            "/api/human_response", self._human_response, methods=["POST"], response_model=HumanResponseAck
        )
        r.add_api_route("/api/sessions/{session_id}", self._session, methods=["GET"], response_model=SessionView)
        r.add_api_route("/api/sessions/{session_id}/events", self._events, methods=["GET"])
        return r

    async def _index(self) -> HTMLResponse:
        return HTMLResponse(
            self._page,
            headers={"Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-cache"},
        )

    async def _chat(self, body: ChatRequest) -> ChatResponse:
        session_id = body.session_id or uuid.uuid4().hex
        location = None
        if body.location is not None:
            location = SharedLocation(body.location.latitude, body.location.longitude, body.location.label)
        msg = IncomingMessage(
            chat=_chat_key(session_id),
            user_id=session_id,
            text=body.message.strip(),
            dedup_id=_dedup_id(session_id, body.client_message_id),
            location=location,
        )
        return ChatResponse(session_id=session_id, outcome=await self._submit(msg))

    async def _human_response(self, body: HumanResponseRequest) -> HumanResponseAck:
        chat = _chat_key(body.session_id)
        if await self._manager.session_info(chat) is None:
            raise HTTPException(404, "unknown session")
        pending = await self._manager.pending_question(chat)
        if pending is None:
            raise HTTPException(409, "no question is waiting for an answer in this session")
        if body.tool_call_id is not None and body.tool_call_id != pending.tool_call_id:
            raise HTTPException(409, "that question has already been answered or has expired")
        # the answer names its question: if that one is answered before this is applied, it
        # changes nothing (the page is told so) instead of answering a later question
        msg = IncomingMessage(
            chat=chat,
            user_id=body.session_id,
            text=body.response.strip(),
            dedup_id=_dedup_id(body.session_id, body.client_message_id),
            kind=MessageKind.BUTTON if body.option else MessageKind.TEXT,
            question_id=pending.tool_call_id,
        )
        return HumanResponseAck(tool_call_id=pending.tool_call_id, outcome=await self._submit(msg))

    async def _submit(self, msg: IncomingMessage) -> Literal["accepted", "duplicate"]:
        outcome = await self._manager.submit(msg)
        if outcome is SubmitOutcome.REFUSED:
            raise HTTPException(403, "this user may not use the bot")
        if outcome is SubmitOutcome.INVALID:  # the page also gets the reason as a notice event
            raise HTTPException(422, "the message is empty or too long")
        return "duplicate" if outcome is SubmitOutcome.DUPLICATE else "accepted"

    async def _session(self, session_id: SessionIdPath) -> SessionView:
        chat = _chat_key(session_id)
        info = await self._manager.session_info(chat)
        if info is None and self._book.peek(session_id) is None:
            raise HTTPException(404, "unknown session")
        # The id first, then the history: an event in between shows twice at worst, never zero times.
        last_event_id = self._book.get(session_id).last_id
        entries = [
            HistoryEntryOut(role=str(e.role), text=e.text, plan=e.plan, ts=getattr(e, "ts", None))
            for e in await self._manager.history(chat)
        ]
        pending = await self._manager.pending_question(chat)
        return SessionView(
            session_id=session_id,
            state=str(info.state) if info is not None else "new",
            lang=info.lang if info is not None else None,
            entries=entries,
            pending=PendingOut(
                tool_call_id=pending.tool_call_id,
                question=pending.question,
                options=list(pending.options),
                deadline=pending.deadline,
            )
            if pending is not None
            else None,
            last_event_id=last_event_id,
        )

    async def _events(
        self,
        session_id: SessionIdPath,
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=80)] = None,
        after: Annotated[str | None, Query(max_length=80)] = None,
    ) -> EventSourceResponse:
        # EventSource cannot set headers on its first connection; `after` carries the id then.
        resume_from = last_event_id or after
        session_log = self._book.get(session_id)
        return EventSourceResponse(
            self._stream(session_log, resume_from),
            ping=self._keepalive_s,
            headers={"Cache-Control": "no-store"},
        )

    async def _stream(self, session_log: SessionLog, resume_from: str | None) -> AsyncIterator[bytes | ServerSentEvent]:
        session_log.subscribers += 1
        try:
            yield ServerSentEvent(comment="connected", retry=self._retry_ms)
            replay = session_log.replay(resume_from)
            if replay.gap:
                cursor = session_log.last_seq
                reset = ResetData(last_event_id=session_log.last_id)
                yield ServerSentEvent(reset.model_dump_json(), event="reset", id=session_log.last_id)
            else:
                cursor = replay.events[-1].seq if replay.events else session_log.last_seq
                for logged in replay.events:
                    yield logged.wire
            while self._running and not session_log.closed:
                await session_log.wait_after(cursor)
                for logged in session_log.after(cursor):
                    cursor = logged.seq
                    yield logged.wire
        finally:
            session_log.subscribers -= 1


def _chat_key(session_id: str) -> ChatKey:
    return ChatKey(PLATFORM, session_id, "")


def _dedup_id(session_id: str, client_message_id: str | None) -> str:
    return f"{session_id}/{client_message_id}" if client_message_id else ""
