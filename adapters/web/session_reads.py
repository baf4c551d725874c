"""The web chat's reads of a session: its view for a (re)loading page, its plan's files, and its
event stream (Server-Sent Events, resumable with Last-Event-ID).

A reload gets the stored history and what the history does not hold (adapters.web.replay): each
answer's review, files and rating, from what the session delivered (after a restart too), and
from the session's events the steps and text of the run working now. The view's
`last_event_id` is read at the same moment as those events, so the stream the page opens next
goes on exactly where they end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated

from fastapi import Header, HTTPException, Query
from fastapi import Path as PathParam
from fastapi.responses import Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from adapters.web.log import EventLogBook, SessionLog
from adapters.web.payloads import (
    SESSION_ID_PATTERN,
    HistoryEntryOut,
    PendingOut,
    ResetData,
    SessionView,
)
from adapters.web.relay import Relay
from adapters.web.render import costs_out, places_of
from adapters.web.replay import decorate, rate, shown_in_log, shown_in_outbox
from adapters.web.runtime import SessionApi
from bot.delivery.plan_files import plan_files
from bot.surface import ChatKey, run_ref

PLATFORM = "web"
SessionIdPath = Annotated[str, PathParam(pattern=SESSION_ID_PATTERN)]


def chat_key(session_id: str) -> ChatKey:
    return ChatKey(PLATFORM, session_id, "")


class SessionReads:
    def __init__(self, manager: SessionApi, book: EventLogBook, relay: Relay | None, *, timezone: str,
                 keepalive_s: float, retry_ms: int, running: Callable[[], bool]) -> None:
        self._manager = manager
        self._book = book
        self._relay = relay
        self._tz = timezone
        self._keepalive_s = keepalive_s
        self._retry_ms = retry_ms
        self._running = running

    async def known(self, session_id: str) -> bool:
        """A session this process or the store knows (another process may have stored its first
        message a moment ago: `POST /api/chat` answered, its session is not yet started)."""
        return self._book.peek(session_id) is not None or await self._manager.known(chat_key(session_id))

    async def caught_up(self, session_id: str) -> SessionLog:
        """The session's log, with what other processes produced for it (adapters.web.relay)."""
        session_log = self._book.get(session_id)
        if self._relay is not None:
            await self._relay.catch_up(session_log)
        return session_log

    async def view(self, session_id: SessionIdPath) -> SessionView:
        chat = chat_key(session_id)
        info = await self._manager.session_info(chat)
        if info is None and not await self.known(session_id):
            raise HTTPException(404, "unknown session")
        # The id (with the events it ends) first, then the history: an event in between shows
        # twice at worst, never zero times.
        session_log = await self.caught_up(session_id)
        last_event_id, events, progress = session_log.last_id, session_log.kept(), session_log.segment.progress()
        lang = (info.lang if info is not None else None) or "en"
        entries = [
            HistoryEntryOut(role=str(e.role), text=e.text, plan=e.plan, ts=getattr(e, "ts", None),
                            costs=costs_out(e.plan, lang) if e.plan is not None else None,
                            places=places_of(e.plan, lang) if e.plan is not None else None)
            for e in await self._manager.history(chat)
        ]
        if info is not None:
            decorate(entries, shown_in_outbox(await self._manager.store.sent_outbox(info.session_id), session_id))
        decorate(entries, shown_in_log(events))  # shown a moment ago, not yet recorded as delivered
        if info is not None:
            rate(entries, await self._manager.store.session_feedback(info.session_id), session_id)
        pending = await self._manager.pending_question(chat)
        working = info is not None and info.state == "working"
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
            run=run_ref(info.session_id, info.run_no) if info is not None and working else None,
            progress=progress if working else [],
            last_event_id=last_event_id,
        )

    async def download(self, session_id: SessionIdPath, filename: Annotated[str, PathParam(max_length=120)]) -> Response:
        chat = chat_key(session_id)
        plans = [e.plan for e in await self._manager.history(chat) if e.plan is not None]
        if not plans:
            raise HTTPException(404, "this session has no plan yet")
        info = await self._manager.session_info(chat)
        lang = (info.lang if info is not None else None) or "en"
        file = next((f for f in plan_files(plans[-1], self._tz, lang) if f.filename == filename), None)
        if file is None:
            raise HTTPException(404, "no such file for the latest plan")
        return Response(file.content.encode(), media_type=f"{file.mime}; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{file.filename}"'})

    async def events(
        self,
        session_id: SessionIdPath,
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=80)] = None,
        after: Annotated[str | None, Query(max_length=80)] = None,
    ) -> EventSourceResponse:
        # EventSource cannot set headers on its first connection; `after` carries the id then.
        resume_from = last_event_id or after
        if not await self.known(session_id):
            raise HTTPException(404, "unknown session")
        session_log = await self.caught_up(session_id)
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
            while self._running() and not session_log.closed:
                await session_log.wait_after(cursor)
                for logged in session_log.after(cursor):
                    cursor = logged.seq
                    yield logged.wire
        finally:
            session_log.subscribers -= 1
