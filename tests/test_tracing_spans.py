"""Spans through the OpenTelemetry API: agent_core.tracing.span (Tracer.start_as_current_span, or
nothing at all when tracing is off), a streamed model call's span, and bot.observe.trip_trace's
trip context stored and read back through the W3C Trace Context propagator."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import (
    INVALID_SPAN,
    StatusCode,
    get_current_span,
    set_span_in_context,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from agent_core.schema import Message
from agent_core.tracing import span
from bot.observe.trip_trace import TripTracer, parent_context, trace_id_of
from bot.store.base import SessionRow
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, reply
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


async def test_a_streamed_model_call_s_span_is_not_current_between_its_pieces(traced):
    """The caller runs between a stream's pieces: it must still see its own span (the segment),
    while the model call's span, a child of the segment, is ended once the stream is."""
    provider, exporter = traced
    tracer = provider.get_tracer("t")
    async with FakeOpenAI([reply("Sunny and warm, all week long.", chunk_chars=5, usage=(40, 8))]) as fake:
        llm = LLM(LLMConfig(model="test-model", api_key="sk-test", base_url=fake.base_url, timeout_s=5),
                  tracer=tracer)
        try:
            with span(tracer, "run segment") as segment:
                pieces = []
                async for item in llm.stream_tool([Message.user("weather?")]):
                    assert get_current_span() is segment
                    if isinstance(item, str):
                        pieces.append(item)
                        assert [s.name for s in exporter.get_finished_spans()] == []  # still open
        finally:
            await llm.aclose()
    assert len(pieces) > 1
    made, done = exporter.get_finished_spans()
    assert made.name == "chat test-model" and done.name == "run segment"
    assert made.parent is not None and made.parent.span_id == segment.get_span_context().span_id
    assert made.attributes is not None and made.attributes["llm.stream"] is True
    assert made.attributes["gen_ai.usage.input_tokens"] == 40 and made.attributes["gen_ai.usage.output_tokens"] == 8
    assert made.status.status_code is StatusCode.UNSET


def test_off_makes_nothing():
    with span(None, "x", {"k": 1}) as s:
        assert s is INVALID_SPAN and not s.is_recording()
    assert TripTracer(None).new_trip(ChatKey("test", "c1"), "s1", 1, "plan a trip") == ""


def session_row(stored: str) -> SessionRow:
    return SessionRow(id="s1", chat_key="test:c1", state="working", lang="en", asker_id="u1", asker_name="",
                      run_no=1, run_steps=0, request="plan a trip", location=None, created_at=0.0,
                      updated_at=0.0, run_started_at=0.0, trace_parent=stored)


def test_the_stored_trip_context_is_what_the_w3c_propagator_writes_and_reads(traced):
    provider, exporter = traced
    stored = TripTracer(provider.get_tracer("t")).new_trip(ChatKey("test", "c1"), "s1", 1, "plan a trip")
    [trip] = exporter.get_finished_spans()
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, context=set_span_in_context(provider.get_tracer("t").start_span(
        "other", context=Context())))
    assert stored.startswith("00-") and len(stored) == len(carrier["traceparent"])
    read = get_current_span(parent_context(stored, TraceContextTextMapPropagator())).get_span_context()
    assert (read.trace_id, read.span_id) == (trip.context.trace_id, trip.context.span_id)
    assert read.is_remote and read.trace_flags.sampled
    assert trace_id_of(stored) == format(trip.context.trace_id, "032x")


def test_a_trip_its_sampler_dropped_stays_dropped_in_every_later_segment(traced):
    """The sampled flag travels in the stored context: a process sampling everything still
    drops the segments of a trip that was not sampled when it began."""
    dropping = TracerProvider(sampler=ALWAYS_OFF)
    chat = ChatKey("test", "c1")
    stored = TripTracer(dropping.get_tracer("t")).new_trip(chat, "s1", 1, "plan a trip")
    assert stored.startswith("00-") and not int(stored[-2:], 16) & 1  # a valid context, the sampled bit clear
    provider, exporter = traced  # the default sampler: parent-based, a new trace always sampled
    with TripTracer(provider.get_tracer("t")).segment(chat, session_row(stored)) as segment:
        assert segment.get_span_context().trace_id == int(stored.split("-")[1], 16)
        assert not segment.is_recording()
    with TripTracer(provider.get_tracer("t")).segment(chat, session_row("")) as fresh:
        assert fresh.is_recording()  # a session with no stored context: a trace of its own, sampled
    assert [s.name for s in exporter.get_finished_spans()] == ["run segment"]


@pytest.mark.parametrize("value", ["", "garbage", "00-" + "0" * 32 + "-" + "1" * 16 + "-01",
                                   "00-" + "1" * 32 + "-" + "0" * 16 + "-01", "00-" + "A" * 32 + "-" + "1" * 16 + "-01"])
def test_no_readable_traceparent_begins_a_trace_of_its_own(value):
    assert not get_current_span(parent_context(value, TraceContextTextMapPropagator())).get_span_context().is_valid
    assert trace_id_of(value) == ""


def test_a_trip_s_segments_are_children_of_its_trip_span(traced):
    provider, exporter = traced
    trips = TripTracer(provider.get_tracer("t"))
    chat = ChatKey("test", "c1")
    session = session_row(trips.new_trip(chat, "s1", 1, "plan a trip"))
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
