"""BOT_LOG_FORMAT=json: every line parses, and a line written while a chat is handled names its
chat key, session, run and trace (tracing on, spans kept in memory)."""

from __future__ import annotations

import io
import json
import logging

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adapters.runtime import build_runtime
from bot.observe.json_logs import json_handler
from bot.observe.log_context import ChatLogContext, trace_id_of
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, fault, reply
from tests.spine_support import (
    RecordingSurface,
    make_llm,
    make_settings,
    make_tools,
    msg,
    plain_prompt,
)

A = ChatKey("test", "logs-a")


async def test_json_lines_name_the_chat_session_run_and_trace(tmp_path):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    logs = ChatLogContext()
    out = io.StringIO()
    handler = json_handler(logs, out)
    root = logging.getLogger()
    root.addHandler(handler)
    surface = RecordingSurface()
    try:
        # a transient fault first: the model client logs a warning inside the run, then retries
        async with FakeOpenAI([fault(503), reply("Here is your plan.")]) as fake:
            llm = make_llm(fake.base_url, tracer=tracer)
            rt = build_runtime(make_settings(tmp_path), model=llm, tools=make_tools(), prompt=plain_prompt,
                               serve_http=False, extra_surfaces=[surface], tracer=tracer, logs=logs)
            await rt.start()
            try:
                await rt.manager.submit(msg(A, "plan a trip"))
                await surface.wait_count("answer", 1)
                await rt.manager.wait_until_idle(A, 5)
                session = await rt.store.get_session(str(A))
            finally:
                await rt.stop()
                await llm.aclose()
    finally:
        root.removeHandler(handler)
        provider.shutdown()
    lines = [json.loads(line) for line in out.getvalue().splitlines()]  # every line parses
    assert lines and all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    assert session is not None and session.trace_parent
    [retry] = [line for line in lines if line["logger"] == "agent_core.llm" and "may retry" in line["message"]]
    assert retry["level"] == "WARNING"
    assert (retry["chat_key"], retry["session_id"], retry["run_no"]) == (str(A), session.id, 1)
    assert retry["trace_id"] == trace_id_of(session.trace_parent)  # the trip's trace, as exported
    assert {format(s.context.trace_id, "032x") for s in exporter.get_finished_spans()} == {retry["trace_id"]}
