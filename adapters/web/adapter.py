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
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import Response
from pydantic import BaseModel
from sse_starlette import EventSourceResponse, ServerSentEvent

from adapters.web.auth import WebAuth
from adapters.web.log import EventLogBook, SessionLog
from adapters.web.payloads import (
    SESSION_ID_PATTERN,
    AnswerData,
    AuthState,
    ChatRequest,
    ChatResponse,
    ErrorData,
    FeedbackAck,
    FeedbackRequest,
    FileData,
    HistoryEntryOut,
    HumanResponseAck,
    HumanResponseRequest,
    LoginRequest,
    NoticeData,
    PendingOut,
    QuestionData,
    ResetData,
    SessionView,
    StopAck,
    StopRequest,
)
from adapters.web.relay import Relay, SharedEvents
from adapters.web.render import progress_data, verdict_data
from adapters.web.runtime import SessionApi
from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    Verdict,
)
from bot.delivery.plan_files import plan_files
from bot.ratelimit import retry_after_header
from bot.settings import Settings
from bot.surface import (
    Attachment,
    ChatKey,
    IncomingMessage,
    MessageKind,
    Notice,
    PartLog,
    RunInfo,
    SubmitOutcome,
    run_ref,
)
from tools.base import SharedLocation

log = logging.getLogger(__name__)

PLATFORM = "web"
STATIC_DIR = Path(__file__).parent / "static"
# The page, its script, style and icon: nothing inline runs, nothing comes from elsewhere.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
    "/favicon.ico": ("favicon.svg", "image/svg+xml"),  # browsers ask for it whatever the page says
}

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
        shared: SharedEvents | None = None,
    ) -> None:
        self._settings = settings
        self._manager = manager
        self._keepalive_s = keepalive_s
        self._retry_ms = retry_ms
        self._book = EventLogBook(max_sessions=max_sessions, max_events=max_events)
        # several processes (PostgreSQL): events travel between them (adapters.web.relay)
        self._relay = Relay(shared, self._book) if shared is not None else None
        self._static = {route: ((STATIC_DIR / name).read_bytes(), media) for route, (name, media) in STATIC_FILES.items()}
        self._running = False
        if settings.web_token is None and not settings.host_is_loopback:
            raise ValueError(f"BOT_WEB_TOKEN is required when BOT_HOST={settings.host} is not loopback")
        self._auth = WebAuth(settings.web_token)
        # per address (every API write and login attempt; shared by every process on PostgreSQL);
        # per chat (messages and answers) is the runtime's own limit
        self._per_ip = manager.limits.addresses
        self._tz = settings.timezone

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
        data = progress_data(event, run.run)
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
            data = AnswerData(text=answer.text, plan=answer.plan, run=run.run if answer.plan and run.run else None)
            await parts.sent(self._emit(chat, "answer", data), more=verdict is not None)
        if verdict is not None and parts.done < 2:
            await parts.sent(self._emit(chat, "verdict", verdict_data(verdict)), more=False)

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
        # the page gets a link; the file is made again from the stored plan when it is fetched
        url = f"/api/sessions/{quote(chat.chat_id)}/files/{quote(file.filename)}"
        await parts.sent(self._emit(chat, "file", FileData(filename=file.filename, title=file.title, url=url)),
                         more=False)

    def _emit(self, chat: ChatKey, event: str, data: BaseModel) -> str:
        logged = self._book.get(chat.chat_id).append(event, data.model_dump_json(exclude_none=True))
        if self._relay is not None:
            self._relay.produced(chat.chat_id, event, logged.data)
        return logged.id

    async def _known(self, session_id: str) -> bool:
        """A session this process or the store knows (another process may have stored its first
        message a moment ago: `POST /api/chat` answered, its session is not yet started)."""
        return self._book.peek(session_id) is not None or await self._manager.known(_chat_key(session_id))

    async def _caught_up(self, session_id: str) -> SessionLog:
        """The session's log, with what other processes produced for it (adapters.web.relay)."""
        session_log = self._book.get(session_id)
        if self._relay is not None:
            await self._relay.catch_up(session_log)
        return session_log

    # ------------------------------------------------------------------ HTTP

    def router(self) -> APIRouter:
        r = APIRouter()
        for route in STATIC_FILES:
            r.add_api_route(route, self._file, methods=["GET"], include_in_schema=False)
        r.add_api_route("/api/auth", self._auth_state, methods=["GET"], response_model=AuthState,
                        summary="Whether this server needs BOT_WEB_TOKEN, and whether this client has it")
        r.add_api_route("/api/login", self._login, methods=["POST"], status_code=204, response_class=Response,
                        summary="Exchange BOT_WEB_TOKEN for the page's session cookie",
                        responses={401: {"description": "wrong token"}, 429: {"description": "too many attempts"}})
        guarded = [Depends(self._auth)]
        r.add_api_route("/api/chat", self._chat, methods=["POST"], response_model=ChatResponse, dependencies=guarded,
                        summary="Send a message: starts a run, continues the session, or answers its question",
                        responses=_ERRORS)
        r.add_api_route(
            "/api/human_response", self._human_response, methods=["POST"], response_model=HumanResponseAck,
            dependencies=guarded, summary="Answer the question the session is waiting on",
            responses={**_ERRORS, 404: {"description": "unknown session"}, 409: {"description": "no question waiting"}},
        )
        r.add_api_route(
            "/api/sessions/{session_id}/stop", self._stop, methods=["POST"], response_model=StopAck,
            dependencies=guarded, summary="Stop the session's run: what it wrote so far is kept",
            responses={**_ERRORS, 404: {"description": "unknown session"}},
        )
        r.add_api_route(
            "/api/sessions/{session_id}/feedback", self._feedback, methods=["POST"], response_model=FeedbackAck,
            dependencies=guarded, summary="👍 / 👎 on a plan of the session (the person's latest rating counts)",
            responses={**_ERRORS, 404: {"description": "unknown session, or no such run in it"}},
        )
        r.add_api_route("/api/sessions/{session_id}", self._session, methods=["GET"], response_model=SessionView,
                        dependencies=guarded, summary="The conversation so far (for a reload)",
                        responses={401: _ERRORS[401], 404: {"description": "unknown session"}})
        r.add_api_route(
            "/api/sessions/{session_id}/files/{filename}", self._download, methods=["GET"], dependencies=guarded,
            summary="The session's latest plan as a calendar (.ics) or cost sheet (.csv)", response_class=Response,
            responses={401: _ERRORS[401], 404: {"description": "no plan, or no such file"}},
        )
        r.add_api_route(
            "/api/sessions/{session_id}/events", self._events, methods=["GET"], dependencies=guarded,
            summary="Server-Sent Events of the session (see the README for the events)",
            response_class=EventSourceResponse,
            responses={200: {"content": {"text/event-stream": {}}}, 401: _ERRORS[401], 404: {"description": "unknown session"}},
        )
        return r

    async def _file(self, request: Request) -> Response:
        body, media = self._static[request.url.path]
        headers = {"Cache-Control": "no-cache"}
        if media.startswith("text/html"):
            headers["Content-Security-Policy"] = PAGE_CSP
        return Response(body, media_type=media, headers=headers)

    async def _auth_state(self, request: Request) -> AuthState:
        return AuthState(required=self._auth.required, authenticated=self._auth.allowed(request))

    async def _login(self, body: LoginRequest, request: Request, response: Response) -> Response:
        self._limit(await self._per_ip.hit(_client_ip(request)))
        if not self._auth.required:
            return Response(status_code=204)
        if not self._auth.token_matches(body.token):
            raise HTTPException(401, "wrong token")
        done = Response(status_code=204)
        self._auth.set_cookie(request, done)
        return done

    @staticmethod
    def _limit(wait_s: float) -> None:
        if wait_s > 0:
            seconds = retry_after_header(wait_s)
            raise HTTPException(429, f"too many requests: try again in {seconds} s", headers={"Retry-After": seconds})

    async def _check_rates(self, request: Request, session_id: str) -> None:
        self._limit(await self._per_ip.hit(_client_ip(request)))  # per chat: the runtime's own limit (LIMITED)

    async def _chat(self, body: ChatRequest, request: Request) -> ChatResponse:
        session_id = body.session_id or uuid.uuid4().hex
        await self._check_rates(request, session_id)
        location = None
        if body.location is not None:
            location = SharedLocation(body.location.latitude, body.location.longitude, body.location.label)
        msg = IncomingMessage(
            chat=_chat_key(session_id),
            user_id=session_id,
            text=body.message.strip(),
            dedup_id=_dedup_id(session_id, body.client_message_id),
            location=location,
            lang=body.lang or "",
        )
        outcome = await self._submit(msg)
        self._book.get(session_id)  # known from now on: its event stream may open at once
        return ChatResponse(session_id=session_id, outcome=outcome)

    async def _human_response(self, body: HumanResponseRequest, request: Request) -> HumanResponseAck:
        await self._check_rates(request, body.session_id)
        chat = _chat_key(body.session_id)
        if not await self._known(body.session_id):
            raise HTTPException(404, "unknown session")
        waiting = await self._manager.pending_questions(chat)  # a team trip asks several at once
        if not waiting:
            raise HTTPException(409, "no question is waiting for an answer in this session")
        pending = next((q for q in waiting if q.tool_call_id == body.tool_call_id), None) if body.tool_call_id else waiting[0]
        if pending is None:
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

    async def _stop(self, session_id: SessionIdPath, request: Request, body: StopRequest | None = None) -> StopAck:
        """A Stop is the `/stop` command of the chat (bot.chat.machine) for the run the body names
        (none: the run working now): the chat's own task decides, and the page hears the outcome
        as a notice event (a run that has ended: "that run has already ended")."""
        await self._check_rates(request, session_id)
        chat = _chat_key(session_id)
        if not await self._known(session_id):
            raise HTTPException(404, "unknown session")
        client_id = body.client_message_id if body is not None else None
        msg = IncomingMessage(chat=chat, user_id=session_id, text="/stop", dedup_id=_dedup_id(session_id, client_id),
                              run=body.run if body is not None else None)
        return StopAck(outcome=await self._submit(msg))

    async def _feedback(self, session_id: SessionIdPath, body: FeedbackRequest, request: Request) -> FeedbackAck:
        await self._check_rates(request, session_id)
        if not await self._manager.record_feedback(_chat_key(session_id), body.run, session_id, body.rating):
            raise HTTPException(404, "no such run in this session")
        return FeedbackAck()

    async def _submit(self, msg: IncomingMessage) -> Literal["accepted", "duplicate"]:
        outcome = await self._manager.submit(msg)
        if outcome is SubmitOutcome.REFUSED:
            raise HTTPException(403, "this user may not use the bot")
        if outcome is SubmitOutcome.INVALID:  # the page also gets the reason as a notice event
            raise HTTPException(422, "the message is empty or too long")
        if outcome is SubmitOutcome.LIMITED:  # the runtime's own per-user limit (see bot.ratelimit)
            raise HTTPException(429, "too many messages: try again in a minute", headers={"Retry-After": "60"})
        return "duplicate" if outcome is SubmitOutcome.DUPLICATE else "accepted"

    async def _session(self, session_id: SessionIdPath) -> SessionView:
        chat = _chat_key(session_id)
        info = await self._manager.session_info(chat)
        if info is None and not await self._known(session_id):
            raise HTTPException(404, "unknown session")
        # The id first, then the history: an event in between shows twice at worst, never zero times.
        last_event_id = (await self._caught_up(session_id)).last_id
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
            run=run_ref(info.session_id, info.run_no) if info is not None and info.state == "working" else None,
            last_event_id=last_event_id,
        )

    async def _download(self, session_id: SessionIdPath, filename: Annotated[str, PathParam(max_length=120)]) -> Response:
        plans = [e.plan for e in await self._manager.history(_chat_key(session_id)) if e.plan is not None]
        if not plans:
            raise HTTPException(404, "this session has no plan yet")
        file = next((f for f in plan_files(plans[-1], self._tz) if f.filename == filename), None)
        if file is None:
            raise HTTPException(404, "no such file for the latest plan")
        return Response(file.content.encode(), media_type=f"{file.mime}; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{file.filename}"'})

    async def _events(
        self,
        session_id: SessionIdPath,
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=80)] = None,
        after: Annotated[str | None, Query(max_length=80)] = None,
    ) -> EventSourceResponse:
        # EventSource cannot set headers on its first connection; `after` carries the id then.
        resume_from = last_event_id or after
        if not await self._known(session_id):
            raise HTTPException(404, "unknown session")
        session_log = await self._caught_up(session_id)
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


_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "BOT_WEB_TOKEN is set and the request does not carry it"},
    403: {"description": "the allowlist (BOT_ALLOWED_USERS) excludes this session"},
    422: {"description": "a bad body, or a message over BOT_MAX_MESSAGE_CHARS"},
    429: {"description": "over the per-address or per-chat rate limit; see the Retry-After header"},
}


def _client_ip(request: Request) -> str:
    """The peer address (uvicorn puts a trusted proxy's X-Forwarded-For here: FORWARDED_ALLOW_IPS)."""
    return request.client.host if request.client else "?"


def _chat_key(session_id: str) -> ChatKey:
    return ChatKey(PLATFORM, session_id, "")


def _dedup_id(session_id: str, client_message_id: str | None) -> str:
    return f"{session_id}/{client_message_id}" if client_message_id else ""
