"""One trace per trip, across pauses and restarts.

A trip is one run of a chat: the request that starts it, the questions it asks, the answers
and expiries that resume it, restarts of the process, and its final answer. Its trace begins
with a short `trip` span made when the request is taken; that span's context (a W3C
traceparent) is stored with the session in the very write that starts the run
(Store.start_turn), and every run segment — the first, each resume, each re-drive after a
restart, in whichever process — is a child of it. So the trace outlives the process that began
it, and nothing extra is written for it.

Off (no tracer), nothing is made and '' is stored.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager, nullcontext

from opentelemetry.context import Context
from opentelemetry.trace import (
    INVALID_SPAN,
    NonRecordingSpan,
    Span,
    SpanContext,
    TraceFlags,
    Tracer,
    set_span_in_context,
)

from agent_core.tracing import span
from bot.store.base import SessionRow
from bot.surface import ChatKey

# Only this process's own writing is read back (version 00, no suffix), so the W3C
# propagator's generality (carriers, getters, tracestate, future versions) is not needed on a
# step's path, where it cost as much as a quarter of a span.
_TRACEPARENT_RE = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")


def traceparent(context: SpanContext) -> str:
    """The W3C traceparent of a span context (as TraceContextTextMapPropagator writes it)."""
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


def parent_context(value: str) -> Context:
    """The context whose (remote) span is the one a stored traceparent names; an empty
    context (the segment begins a trace of its own) when there is none or it is unreadable."""
    match = _TRACEPARENT_RE.fullmatch(value)
    if match is None:
        return Context()
    trace_id, span_id = int(match[1], 16), int(match[2], 16)
    if not trace_id or not span_id:
        return Context()
    remote = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(int(match[3], 16)))
    return set_span_in_context(NonRecordingSpan(remote), Context())


class TripTracer:
    def __init__(self, tracer: Tracer | None) -> None:
        self.tracer = tracer

    def new_trip(self, chat: ChatKey, session_id: str, run_no: int, request: str) -> str:
        """Begin a trip's trace; its context to store with the session ('' when off)."""
        if self.tracer is None:
            return ""
        root = self.tracer.start_span("trip", context=Context(), attributes={
            "chat.key": str(chat), "chat.platform": chat.platform, "session.id": session_id, "run.no": run_no,
            "trip.request": request[:200],
        })
        root.end()  # a trace may not wait for a span held open across days and restarts
        context = root.get_span_context()
        return traceparent(context) if context.is_valid else ""

    def segment(self, chat: ChatKey, session: SessionRow) -> AbstractContextManager[Span]:
        """The span of one run segment, current for the block, in the trip's trace (a trace of
        its own when the session has none: tracing was off when the run began)."""
        if self.tracer is None:
            return nullcontext(INVALID_SPAN)
        return span(self.tracer, "run segment", {
            "chat.key": str(chat), "chat.platform": chat.platform, "session.id": session.id,
            "run.no": session.run_no, "run.steps_before": session.run_steps,
        }, context=parent_context(session.trace_parent))
