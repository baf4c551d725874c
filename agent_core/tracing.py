"""Spans for the agent's model and tool calls, on the OpenTelemetry API.

The tracer is passed down from bot.py like every other dependency; None means tracing is off,
and then nothing is created at all (not even a no-op span or a context switch), so a run with
tracing off does exactly what it did before tracing existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType

from opentelemetry.context import Context, attach, detach
from opentelemetry.trace import INVALID_SPAN, Span, Status, StatusCode, Tracer, set_span_in_context
from opentelemetry.util.types import AttributeValue

ARGUMENTS_SHOWN = 200  # characters of a tool call's arguments kept on its span
# nullcontext keeps nothing between uses, so one serves every block: the off path makes nothing
_OFF: AbstractContextManager[Span] = nullcontext(INVALID_SPAN)


def span(tracer: Tracer | None, name: str, attributes: Mapping[str, AttributeValue] | None = None,
         context: Context | None = None) -> AbstractContextManager[Span]:
    """A span current for the block (child of `context`'s span, else of the current one), or,
    without a tracer, the invalid span, on which every call does nothing: guard costly
    attribute values with `span.is_recording()`."""
    if tracer is None:
        return _OFF
    return _Current(tracer, name, attributes, context)


class _Current:
    """`Tracer.start_as_current_span`, as one plain class: that one stacks two generator-based
    context managers (its own and `use_span`'s) around the same attach, end and error handling,
    which cost about a fifth of a span's price on a step's path (benchmarks/bench_tracing.py)."""

    __slots__ = ("_attributes", "_context", "_name", "_span", "_token", "_tracer")

    def __init__(self, tracer: Tracer, name: str, attributes: Mapping[str, AttributeValue] | None,
                 context: Context | None) -> None:
        self._tracer, self._name, self._attributes, self._context = tracer, name, attributes, context

    def __enter__(self) -> Span:
        self._span = s = self._tracer.start_span(self._name, context=self._context, attributes=self._attributes)
        self._token = attach(set_span_in_context(s))
        return s

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        s = self._span
        try:
            detach(self._token)
            # as use_span does: an Exception is an error; a BaseException (a pause, a
            # cancellation) is how the run stops, not a fault of the span's work
            if isinstance(exc, Exception) and s.is_recording():
                s.record_exception(exc)
                s.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        finally:
            s.end()


def summary(text: str, limit: int = ARGUMENTS_SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
