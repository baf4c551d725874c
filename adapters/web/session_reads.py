"""The web chat's reads of a session: its view for a (re)loading page, its plan's files, and its
event stream (Server-Sent Events, resumable with Last-Event-ID).

A reload gets the stored history and what the history does not hold (adapters.web.replay): each
answer's review, files and rating, from the session's outbox (delivered or about to be: after a
restart too), and from the session's events the steps and text of the run working now. The
view's `last_event_id` is read at the same moment as those events, so the stream the page opens
next goes on exactly where they end; and its `drawn` names what it drew that a delivery may still
bring, which that stream skips: each answer shows once.

A file's link names its file (`v`, adapters.web.render.file_url): the download gives the file
the outbox row delivered, so a plan made again never changes an older answer's files.
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
from adapters.web.render import costs_out, file_key, places_of
from adapters.web.replay import (
    Shown,
    decorate,
    drawn_event,
    drawn_keys,
    rate,
    shown_in_log,
    shown_in_outbox,
)
from adapters.web.runtime import SessionApi
from bot.delivery.plan_files import file_from_body, plan_files
from bot.store.rows import OutboxRow
from bot.surface import Attachment, ChatKey, run_ref

PLATFORM = "web"
SessionIdPath = Annotated[str, PathParam(pattern=SESSION_ID_PATTERN)]
DrawnQuery = Annotated[str | None, Query(max_length=2000, pattern=r"^[0-9A-Za-z_.,-]*$",
                                         description="the session view's `drawn`, comma-joined: skipped")]
FileVersion = Annotated[str | None, Query(pattern=r"^[0-9a-f]{16}$",
                                          description="the file the link came with (its `url` has it)")]


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
        # The id (with the events it ends) first, then the history: an event in between is never
        # lost; an answer, review or file it brings is drawn here and skipped by the stream the
        # page opens with `drawn`, so it shows once (a notice would show twice at worst).
        session_log = await self.caught_up(session_id)
        last_event_id, events, progress = session_log.last_id, session_log.kept(), session_log.segment.progress()
        lang = (info.lang if info is not None else None) or "en"
        entries = [
            HistoryEntryOut(role=str(e.role), text=e.text, plan=e.plan, ts=getattr(e, "ts", None),
                            costs=costs_out(e.plan, lang) if e.plan is not None else None,
                            places=places_of(e.plan, lang) if e.plan is not None else None)
            for e in await self._manager.history(chat)
        ]
        drawn: list[Shown] = []
        if info is not None:  # delivered, or about to be: the stream then skips what is drawn here
            drawn = decorate(entries, shown_in_outbox(await self._outbox(info.session_id, session_id), session_id))
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
            drawn=drawn_keys(drawn),
        )

    async def _outbox(self, session_id: str, web_session: str) -> list[OutboxRow]:
        """The session's outbox rows, delivered or not yet, in order (pending ones read first: a
        row delivered between the two reads is among the delivered)."""
        store = self._manager.store
        pending = [r for r in await store.pending_outbox(str(chat_key(web_session))) if r.session_id == session_id]
        rows = {r.id: r for r in pending} | {r.id: r for r in await store.sent_outbox(session_id)}
        return [rows[i] for i in sorted(rows)]

    async def download(self, session_id: SessionIdPath, filename: Annotated[str, PathParam(max_length=120)],
                       v: FileVersion = None) -> Response:
        chat = chat_key(session_id)
        info = await self._manager.session_info(chat)
        if v is not None:  # the very file its link came with, as its outbox row keeps it
            rows = await self._outbox(info.session_id, session_id) if info is not None else []
            kept = (file_from_body(r.body) for r in reversed(rows) if r.kind == "file")
            file = next((f for f in kept if f.filename == filename and file_key(f.content) == v), None)
            if file is None:
                raise HTTPException(404, "this file is no longer kept: its link belongs to another trip")
            return _attachment(file)
        # a link without `v` (from an older page): the file of the session's latest plan
        plans = [e.plan for e in await self._manager.history(chat) if e.plan is not None]
        if not plans:
            raise HTTPException(404, "this session has no plan yet")
        lang = (info.lang if info is not None else None) or "en"
        file = next((f for f in plan_files(plans[-1], self._tz, lang) if f.filename == filename), None)
        if file is None:
            raise HTTPException(404, "no such file for the latest plan")
        return _attachment(file)

    async def events(
        self,
        session_id: SessionIdPath,
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=80)] = None,
        after: Annotated[str | None, Query(max_length=80)] = None,
        drawn: DrawnQuery = None,
    ) -> EventSourceResponse:
        # EventSource cannot set headers on its first connection; `after` carries the id then.
        resume_from = last_event_id or after
        if not await self.known(session_id):
            raise HTTPException(404, "unknown session")
        session_log = await self.caught_up(session_id)
        return EventSourceResponse(
            self._stream(session_log, resume_from, frozenset(k for k in (drawn or "").split(",") if k)),
            ping=self._keepalive_s,
            headers={"Cache-Control": "no-store"},
        )

    async def _stream(self, session_log: SessionLog, resume_from: str | None,
                      drawn: frozenset[str]) -> AsyncIterator[bytes | ServerSentEvent]:
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
                    if not drawn_event(logged.event, logged.data, drawn):
                        yield logged.wire
            while self._running() and not session_log.closed:
                await session_log.wait_after(cursor)
                for logged in session_log.after(cursor):
                    cursor = logged.seq
                    if not drawn_event(logged.event, logged.data, drawn):  # the reloaded page has it
                        yield logged.wire
        finally:
            session_log.subscribers -= 1


def _attachment(file: Attachment) -> Response:
    return Response(file.content.encode(), media_type=f"{file.mime}; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{file.filename}"'})
