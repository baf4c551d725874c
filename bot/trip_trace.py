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

from contextlib import AbstractContextManager, nullcontext

from opentelemetry.context import Context
from opentelemetry.trace import INVALID_SPAN, Span, Tracer, set_span_in_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from bot.chat import ChatKey
from bot.store.base import SessionRow

TRACEPARENT = "traceparent"


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
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context=set_span_in_context(root))
        return carrier.get(TRACEPARENT, "")

    def segment(self, chat: ChatKey, session: SessionRow) -> AbstractContextManager[Span]:
        """The span of one run segment, current for the block, in the trip's trace (a trace of
        its own when the session has none: tracing was off when the run began)."""
        if self.tracer is None:
            return nullcontext(INVALID_SPAN)
        parent = self._propagator.extract({TRACEPARENT: session.trace_parent}) if session.trace_parent else Context()
        return self.tracer.start_as_current_span("run segment", context=parent, attributes={
            "chat.key": str(chat), "chat.platform": chat.platform, "session.id": session.id,
            "run.no": session.run_no, "run.steps_before": session.run_steps,
        })
