"""The span helpers on a step's path behave as the OpenTelemetry API's general ones they replace:
agent_core.tracing.span as Tracer.start_as_current_span, bot.observe.trip_trace's traceparent reading
and writing as the W3C propagator."""

from __future__ import annotations

import asyncio
import time

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    INVALID_SPAN,
    Status,
    StatusCode,
    get_current_span,
    set_span_in_context,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agent_core.tracing import LateSpan, late_span, span
from bot.observe.trip_trace import TripTracer, parent_context, traceparent
from bot.store.base import SessionRow
from bot.surface import ChatKey
from tools.signals import HumanInputRequired


@pytest.fixture
def traced() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_a_span_is_current_in_its_block_a_child_of_the_current_one_and_ended(traced):
    provider, exporter = traced
    tracer = provider.get_tracer("t")
    with span(tracer, "outer") as outer:
        with span(tracer, "inner", {"k": 1}) as inner:
            assert get_current_span() is inner
        assert get_current_span() is outer
    assert get_current_span() is INVALID_SPAN
    inner_done, outer_done = exporter.get_finished_spans()
    assert inner_done.parent is not None and inner_done.parent.span_id == outer_done.context.span_id
    assert inner_done.attributes == {"k": 1}


def test_a_span_given_a_context_is_a_child_of_that_context_s_span(traced):
    provider, exporter = traced
    tracer = provider.get_tracer("t")
    root = tracer.start_span("root", context=Context())
    root.end()
    with span(tracer, "other"), span(tracer, "child", context=set_span_in_context(root)):
        pass
    child = next(s for s in exporter.get_finished_spans() if s.name == "child")
    assert child.parent is not None and child.parent.span_id == root.get_span_context().span_id


def test_an_error_in_the_block_is_recorded_a_pause_or_a_cancellation_is_not(traced):
    provider, exporter = traced
    tracer = provider.get_tracer("t")
    with pytest.raises(ValueError), span(tracer, "fails"):
        raise ValueError("bad value")
    with pytest.raises(HumanInputRequired), span(tracer, "pauses"):
        raise HumanInputRequired("Which date?", "c1")
    with pytest.raises(asyncio.CancelledError), span(tracer, "stopped"):
        raise asyncio.CancelledError
    fails, pauses, stopped = exporter.get_finished_spans()
    assert fails.status.status_code is StatusCode.ERROR and fails.status.description == "ValueError: bad value"
    assert [e.name for e in fails.events] == ["exception"]
    for s in (pauses, stopped):
        assert s.status.status_code is StatusCode.UNSET and not s.events and s.end_time is not None
    assert get_current_span() is INVALID_SPAN


def test_a_late_span_is_made_at_its_end_as_it_would_have_been_at_its_start(traced):
    provider, exporter = traced
    tracer = provider.get_tracer("t")
    with span(tracer, "segment") as segment:
        before = time.time_ns()
        late = LateSpan(tracer, "chat m", {"gen_ai.request.model": "m"})
        after = time.time_ns()
    late.set_attributes({"gen_ai.usage.input_tokens": 100, "llm.attempts": 2})
    late.add_event("attempt failed", {"error.type": "timeout"})
    at = time.time_ns()
    late.set_status(Status(StatusCode.ERROR, "gave up"))
    assert late.is_recording() and [s.name for s in exporter.get_finished_spans()] == ["segment"]
    late.end()
    late.end()  # once only, as the SDK's
    assert not late.is_recording()
    _, made = exporter.get_finished_spans()
    assert made.name == "chat m" and made.parent is not None  # the parent current when it began
    assert made.parent.span_id == segment.get_span_context().span_id
    assert made.start_time is not None and before <= made.start_time <= after
    assert made.attributes == {"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 100, "llm.attempts": 2}
    [event] = made.events
    assert event.name == "attempt failed" and event.attributes == {"error.type": "timeout"} and event.timestamp <= at
    assert made.status.status_code is StatusCode.ERROR and made.status.description == "gave up"


def test_a_late_span_in_a_with_block_is_ended_by_it_an_error_marked_a_pause_not(traced):
    provider, exporter = traced
    tracer = provider.get_tracer("t")
    with span(tracer, "segment") as segment:
        with late_span(tracer, "tool ok", {"tool.name": "ok"}) as s:
            s.set_attributes({"tool.ok": True})
        with pytest.raises(ValueError), late_span(tracer, "tool fails"):
            raise ValueError("bad value")
        with pytest.raises(HumanInputRequired), late_span(tracer, "tool ask_human") as s:
            s.set_attribute("tool.paused", True)
            raise HumanInputRequired("Which date?", "c1")
    ok, fails, asked, _ = exporter.get_finished_spans()
    for made in (ok, fails, asked):
        assert made.parent is not None and made.parent.span_id == segment.get_span_context().span_id
    assert ok.attributes == {"tool.name": "ok", "tool.ok": True} and ok.status.status_code is StatusCode.UNSET
    assert fails.status.status_code is StatusCode.ERROR and fails.status.description == "ValueError: bad value"
    assert [e.name for e in fails.events] == ["exception"]
    assert asked.attributes == {"tool.paused": True} and asked.status.status_code is StatusCode.UNSET


def test_off_makes_nothing():
    with span(None, "x", {"k": 1}) as s:
        assert s is INVALID_SPAN and not s.is_recording()
    with late_span(None, "x", {"k": 1}) as s:
        assert s is INVALID_SPAN and not s.is_recording()


@pytest.mark.parametrize("sampled", [True, False])
def test_the_traceparent_is_written_and_read_as_the_w3c_propagator_does(traced, sampled):
    provider, _ = traced
    root = provider.get_tracer("t").start_span("trip", context=Context())
    root.end()
    context = root.get_span_context()
    if not sampled:  # as a trip a ratio sampler dropped has it
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

        context = SpanContext(context.trace_id, context.span_id, is_remote=False, trace_flags=TraceFlags(0))
        root = NonRecordingSpan(context)
    propagator = TraceContextTextMapPropagator()
    carrier: dict[str, str] = {}
    propagator.inject(carrier, context=set_span_in_context(root))
    assert traceparent(context) == carrier["traceparent"]
    ours = get_current_span(parent_context(carrier["traceparent"])).get_span_context()
    theirs = get_current_span(propagator.extract(carrier)).get_span_context()
    assert ours == theirs and ours.is_remote and ours.trace_flags.sampled is sampled


@pytest.mark.parametrize("value", ["", "garbage", "00-" + "0" * 32 + "-" + "1" * 16 + "-01",
                                   "00-" + "1" * 32 + "-" + "0" * 16 + "-01", "00-" + "A" * 32 + "-" + "1" * 16 + "-01"])
def test_no_readable_traceparent_begins_a_trace_of_its_own(value):
    assert not get_current_span(parent_context(value)).get_span_context().is_valid


def test_a_trip_s_segments_are_children_of_its_trip_span(traced):
    provider, exporter = traced
    trips = TripTracer(provider.get_tracer("t"))
    chat = ChatKey("test", "c1")
    stored = trips.new_trip(chat, "s1", 1, "plan a trip")
    session = SessionRow(id="s1", chat_key=str(chat), state="working", lang="en", asker_id="u1", asker_name="",
                         run_no=1, run_steps=0, request="plan a trip", location=None, created_at=0.0,
                         updated_at=0.0, run_started_at=0.0, trace_parent=stored)
    with trips.segment(chat, session):
        pass
    with trips.segment(chat, session):
        pass
    trip, *segments = exporter.get_finished_spans()
    assert trip.name == "trip" and trip.parent is None
    assert len(segments) == 2
    for s in segments:
        assert s.parent is not None and s.parent.span_id == trip.context.span_id
        assert s.context.trace_id == trip.context.trace_id
        assert s.attributes is not None and s.attributes["session.id"] == "s1"
