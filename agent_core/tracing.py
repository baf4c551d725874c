"""Spans for the agent's model and tool calls, on the OpenTelemetry API.

The tracer is passed down from bot.py like every other dependency; None means tracing is off,
and then nothing is created at all (not even a no-op span or a context switch), so a run with
tracing off does exactly what it did before tracing existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext

from opentelemetry.context import Context
from opentelemetry.trace import INVALID_SPAN, Span, Tracer
from opentelemetry.util.types import AttributeValue

ARGUMENTS_SHOWN = 200  # characters of a tool call's arguments kept on its span
# nullcontext keeps nothing between uses, so one serves every block: the off path makes nothing
_OFF: AbstractContextManager[Span] = nullcontext(INVALID_SPAN)


def span(tracer: Tracer | None, name: str, attributes: Mapping[str, AttributeValue] | None = None,
         context: Context | None = None) -> AbstractContextManager[Span]:
    """`Tracer.start_as_current_span`: a span current for the block, a child of `context`'s span
    (else of the current one), ended with it; an Exception leaving the block marks it an error, a
    BaseException (a pause, a cancellation: how a run stops, not a fault of the span's work) does
    not. Without a tracer, the invalid span, on which every call does nothing: guard costly
    attribute values with `span.is_recording()`."""
    if tracer is None:
        return _OFF
    return tracer.start_as_current_span(name, context=context, attributes=attributes)


def summary(text: str, limit: int = ARGUMENTS_SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
