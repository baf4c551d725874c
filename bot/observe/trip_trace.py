"""One trace per trip, across pauses and restarts.

A trip is one run of a chat: the request that starts it, the questions it asks, the answers
and expiries that resume it, restarts of the process, and its final answer. Its trace begins
with a short `trip` span made when the request is taken. The W3C Trace Context propagator
writes that span's context into a carrier, whose `traceparent` is stored with the session in the
very write that starts the run (Store.start_turn); every run segment — the first, each resume,
each re-drive after a restart, in whichever process — is a child of the context the propagator
reads back from it. So the trace outlives the process that began it, and nothing extra is
written for it.

Only `traceparent` is kept: `tracestate` carries vendors' entries, which our spans never set.
Off (no tracer), nothing is made and '' is stored.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from opentelemetry.context import Context
from opentelemetry.trace import (
    INVALID_SPAN,
    Span,
    Tracer,
    format_trace_id,
    get_current_span,
    set_span_in_context,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agent_core.tracing import span
from bot.store.base import SessionRow
from bot.surface import ChatKey

TRACEPARENT = "traceparent"


def stored_context(trip: Span, propagator: TraceContextTextMapPropagator) -> str:
    """What to store of a trip span's context: the traceparent the propagator writes for it
    ('' for an invalid span, for which it writes none)."""
    carrier: dict[str, str] = {}
    propagator.inject(carrier, context=set_span_in_context(trip, Context()))
    return carrier.get(TRACEPARENT, "")


def parent_context(stored: str, propagator: TraceContextTextMapPropagator) -> Context:
    """The context whose (remote) span is the one a stored traceparent names; an empty
    context (the segment begins a trace of its own) when there is none or it is unreadable."""
    return propagator.extract({TRACEPARENT: stored}) if stored else Context()


def trace_id_of(stored: str) -> str:
    """The trace id (32 hex digits) a stored traceparent names, '' when none."""
    context = get_current_span(parent_context(stored, TraceContextTextMapPropagator())).get_span_context()
    return format_trace_id(context.trace_id) if context.is_valid else ""


class TripTracer:
    def __init__(self, tracer: Tracer | None) -> None:
        self.tracer = tracer
        self._propagator = TraceContextTextMapPropagator()

    def new_trip(self, chat: ChatKey, session_id: str, run_no: int, request: str) -> str:
        """Begin a trip's trace; its context to store with the session ('' when off)."""
        if self.tracer is None:
            return ""
        root = self.tracer.start_span("trip", context=Context(), attributes={
            "chat.key": str(chat), "chat.platform": chat.platform, "session.id": session_id, "run.no": run_no,
            "trip.request": request[:200],
        })
        root.end()  # a trace may not wait for a span held open across days and restarts
        return stored_context(root, self._propagator)

    def segment(self, chat: ChatKey, session: SessionRow) -> AbstractContextManager[Span]:
        """The span of one run segment, current for the block, in the trip's trace (a trace of
        its own when the session has none: tracing was off when the run began)."""
        if self.tracer is None:
            return nullcontext(INVALID_SPAN)
        return span(self.tracer, "run segment", {
            "chat.key": str(chat), "chat.platform": chat.platform, "session.id": session.id,
            "run.no": session.run_no, "run.steps_before": session.run_steps,
        }, context=parent_context(session.trace_parent, self._propagator))
