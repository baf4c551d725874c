"""Spans for the agent's model and tool calls, on the OpenTelemetry API.

The tracer is passed down from bot.py like every other dependency; None means tracing is off,
and then nothing is created at all (not even a no-op span or a context switch), so a run with
tracing off does exactly what it did before tracing existed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import cast

from opentelemetry.context import Context, attach, detach, get_current
from opentelemetry.trace import (
    INVALID_SPAN,
    INVALID_SPAN_CONTEXT,
    Span,
    SpanContext,
    Status,
    StatusCode,
    Tracer,
    set_span_in_context,
)
from opentelemetry.util.types import AnyValue, Attributes, AttributeValue

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
    which in the running bot cost about 15 us of a current span's 80 (benchmarks/bench_tracing.py)."""

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
            if s.is_recording():
                _mark_failed(s, exc)
        finally:
            s.end()


def _mark_failed(s: Span, exc: BaseException | None) -> None:
    """As use_span does: an Exception is an error; a BaseException (a pause, a cancellation) is
    how the run stops, not a fault of the span's work."""
    if isinstance(exc, Exception):
        s.record_exception(exc)
        s.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))


def late_span(tracer: Tracer | None, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> Span:
    """A LateSpan, or without a tracer the invalid span; `with` ends either, an Exception
    leaving the block marks the span an error (as `span` does)."""
    return LateSpan(tracer, name, attributes) if tracer is not None else INVALID_SPAN


class LateSpan(Span):
    """A span the SDK makes when its work is over, from what was noted meanwhile, for a span
    that need not be current and has no children (a model call that is streamed, a tool call):
    its start time and parent are taken now, its attributes, events and status are kept until
    `end`. Log lines written meanwhile carry the parent's span id.

    Why: in a busy process every pass through the SDK's span code meets cold caches and costs
    several times what it does in a tight loop, and a span made at its start and filled and
    ended at its end pays two such passes; made at once it pays one (benchmarks/bench_tracing.py).
    Until `end` it has no span context, and it records even if the sampler will then drop it."""

    def __init__(self, tracer: Tracer, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> None:
        self._tracer, self._name = tracer, name
        self._attributes: dict[str, AnyValue] = dict(attributes or {})
        self._later: list[Callable[[Span], None]] = []  # events and status, rare: replayed in order
        self._parent = get_current()
        self._start = time.time_ns()
        self._ended = False

    def set_attributes(self, attributes: Mapping[str, AnyValue]) -> None:
        self._attributes.update(attributes)

    def set_attribute(self, key: str, value: AnyValue) -> None:
        self._attributes[key] = value

    def add_event(self, name: str, attributes: Attributes = None, timestamp: int | None = None) -> None:
        at = timestamp if timestamp is not None else time.time_ns()
        self._later.append(lambda made: made.add_event(name, attributes, at))

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        self._later.append(lambda made: made.set_status(status, description))

    def record_exception(self, exception: BaseException, attributes: Attributes = None,
                         timestamp: int | None = None, escaped: bool = False) -> None:
        at = timestamp if timestamp is not None else time.time_ns()
        self._later.append(lambda made: made.record_exception(exception, attributes, at, escaped))

    def update_name(self, name: str) -> None:
        self._name = name

    def is_recording(self) -> bool:
        return not self._ended

    def get_span_context(self) -> SpanContext:
        return INVALID_SPAN_CONTEXT

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _mark_failed(self, exc)
        self.end()

    def end(self, end_time: int | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        made = self._tracer.start_span(self._name, context=self._parent, start_time=self._start,
                                       attributes=cast(Mapping[str, AttributeValue], self._attributes))
        for later in self._later:
            later(made)
        made.end(end_time)


def summary(text: str, limit: int = ARGUMENTS_SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
