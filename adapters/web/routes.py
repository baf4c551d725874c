"""The web chat's HTTP API: the page's files, `/api/auth` and `/api/login`, the session's
writes (a message, an answer to its question, a stop, a rating) and, from session_reads.py, its
reads (the view, the plan's files, the event stream).

Every write and login attempt counts against the per-address limit first (shared by every
process on PostgreSQL); per chat, messages and answers are the runtime's own limit. A write
only submits to the runtime and answers with what became of it: the runs' output reaches the
page as events in the session's log (adapter.py).
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from sse_starlette import EventSourceResponse

from adapters.web.auth import WebAuth
from adapters.web.log import EventLogBook
from adapters.web.payloads import (
    AuthState,
    ChatRequest,
    ChatResponse,
    FeedbackAck,
    FeedbackRequest,
    HumanResponseAck,
    HumanResponseRequest,
    LoginRequest,
    SessionView,
    StopAck,
    StopRequest,
)
from adapters.web.runtime import SessionApi
from adapters.web.session_reads import SessionIdPath, SessionReads, chat_key
from adapters.web.static_files import StaticFiles
from bot.ratelimit import retry_after_header
from bot.surface import IncomingMessage, MessageKind, SubmitOutcome
from tools.base import SharedLocation


class WebRoutes:
    def __init__(self, manager: SessionApi, book: EventLogBook, reads: SessionReads, auth: WebAuth,
                 static: StaticFiles) -> None:
        self._manager = manager
        self._book = book
        self._reads = reads
        self._auth = auth
        self._static = static
        # per address (every API write and login attempt; shared by every process on PostgreSQL);
        # per chat (messages and answers) is the runtime's own limit
        self._per_ip = manager.limits.addresses

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
