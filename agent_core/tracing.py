"""Spans for the agent's model and tool calls, on the OpenTelemetry API.

The tracer is passed down from bot.py like every other dependency; None means tracing is off,
and then nothing is created at all (not even a no-op span or a context switch), so a run with
tracing off does exactly what it did before tracing existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext

from opentelemetry.trace import INVALID_SPAN, Span, Tracer
from opentelemetry.util.types import AttributeValue

ARGUMENTS_SHOWN = 200  # characters of a tool call's arguments kept on its span


def span(tracer: Tracer | None, name: str, attributes: Mapping[str, AttributeValue] | None = None,
         ) -> AbstractContextManager[Span]:
    """A span current for the block (child of the current one), or, without a tracer, the
    invalid span, on which every call does nothing: guard costly attribute values with
    `span.is_recording()`."""
    if tracer is None:
        return nullcontext(INVALID_SPAN)
    return tracer.start_as_current_span(name, attributes=attributes)


def summary(text: str, limit: int = ARGUMENTS_SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
