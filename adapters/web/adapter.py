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
from typing import Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel
from sse_starlette import EventSourceResponse

from adapters.web.auth import WebAuth
from adapters.web.log import EventLogBook, SessionLog
from adapters.web.payloads import (
    AuthState,
    ChatRequest,
    ChatResponse,
    ErrorData,
    FeedbackAck,
    FeedbackRequest,
    FileData,
    HumanResponseAck,
    HumanResponseRequest,
    LoginRequest,
    NoticeData,
    QuestionData,
    SessionView,
    StopAck,
    StopRequest,
)
from adapters.web.relay import Relay, SharedEvents
from adapters.web.render import answer_data, progress_data, verdict_data
from adapters.web.runtime import SessionApi
from adapters.web.session_reads import PLATFORM, SessionIdPath, SessionReads, chat_key
from adapters.web.static_files import StaticFiles
from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    Verdict,
)
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
)
from tools.base import SharedLocation

log = logging.getLogger(__name__)

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
        self._book = EventLogBook(max_sessions=max_sessions, max_events=max_events)
        # several processes (PostgreSQL): events travel between them (adapters.web.relay)
        self._relay = Relay(shared, self._book) if shared is not None else None
        self._static = StaticFiles()
        self._running = False
        if settings.web_token is None and not settings.host_is_loopback:
            raise ValueError(f"BOT_WEB_TOKEN is required when BOT_HOST={settings.host} is not loopback")
        self._auth = WebAuth(settings.web_token)
        # per address (every API write and login attempt; shared by every process on PostgreSQL);
        # per chat (messages and answers) is the runtime's own limit
        self._per_ip = manager.limits.addresses
        self._reads = SessionReads(manager, self._book, self._relay, timezone=settings.timezone,
                                   keepalive_s=keepalive_s, retry_ms=retry_ms, running=lambda: self._running)

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
            if answer.plan is not None and run.run:  # what the plan's thumbs up / down rate
                data = data.model_copy(update={"run": run.run})
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

    # ------------------------------------------------------------------ HTTP

    def router(self) -> APIRouter:
        # FastAPI answers 400 itself for a body that is not JSON at all, before any route runs
        r = APIRouter(responses={400: {"description": "the body is not valid JSON"}})
        for route in self._static.routes:
            r.add_api_route(route, self._static.serve, methods=["GET"], include_in_schema=False)
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
        r.add_api_route("/api/sessions/{session_id}", self._reads.view, methods=["GET"], response_model=SessionView,
                        dependencies=guarded, summary="The conversation so far (for a reload)",
                        responses={401: _ERRORS[401], 404: {"description": "unknown session"}})
        r.add_api_route(
            "/api/sessions/{session_id}/files/{filename}", self._reads.download, methods=["GET"], dependencies=guarded,
            summary="The session's latest plan as a calendar (.ics) or cost sheet (.csv)", response_class=Response,
            responses={401: _ERRORS[401], 404: {"description": "no plan, or no such file"}},
        )
        r.add_api_route(
            "/api/sessions/{session_id}/events", self._reads.events, methods=["GET"], dependencies=guarded,
            summary="Server-Sent Events of the session (see the README for the events)",
            response_class=EventSourceResponse,
            responses={200: {"content": {"text/event-stream": {}}}, 401: _ERRORS[401], 404: {"description": "unknown session"}},
        )
        return r

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
            chat=chat_key(session_id),
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
        chat = chat_key(body.session_id)
        if not await self._reads.known(body.session_id):
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
        chat = chat_key(session_id)
        if not await self._reads.known(session_id):
            raise HTTPException(404, "unknown session")
        client_id = body.client_message_id if body is not None else None
        msg = IncomingMessage(chat=chat, user_id=session_id, text="/stop", dedup_id=_dedup_id(session_id, client_id),
                              run=body.run if body is not None else None)
        return StopAck(outcome=await self._submit(msg))

    async def _feedback(self, session_id: SessionIdPath, body: FeedbackRequest, request: Request) -> FeedbackAck:
        await self._check_rates(request, session_id)
        if not await self._manager.record_feedback(chat_key(session_id), body.run, session_id, body.rating):
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


_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "BOT_WEB_TOKEN is set and the request does not carry it"},
    403: {"description": "the allowlist (BOT_ALLOWED_USERS) excludes this session"},
    422: {"description": "a bad body, or a message over BOT_MAX_MESSAGE_CHARS"},
    429: {"description": "over the per-address or per-chat rate limit; see the Retry-After header"},
}


def _client_ip(request: Request) -> str:
    """The peer address (uvicorn puts a trusted proxy's X-Forwarded-For here: FORWARDED_ALLOW_IPS)."""
    return request.client.host if request.client else "?"


def _dedup_id(session_id: str, client_message_id: str | None) -> str:
    return f"{session_id}/{client_message_id}" if client_message_id else ""
