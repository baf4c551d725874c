"""One trace per trip, across a pause, a SIGKILL and a restart.

The bot is `python -m tests.spine_bot` in a subprocess, exporting with the real OTLP exporter
to the fake collector in this test process (tests/fakes/otlp_collector.py).
"""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.otlp_collector import FakeCollector
from tests.test_kill_resume import BotProcess, bot_env, wait_posted

pytestmark = pytest.mark.slow


async def test_a_trip_is_one_trace_across_a_question_a_kill_and_a_restart(tmp_path):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which date?"}, id="ask_t1")], usage=(100, 10)),
        reply(tool_calls=[call("wait_file", {"tag": "t1"}, id="slow_t1")], usage=(200, 20)),
        reply("<answer>Done for the 5th.</answer>", usage=(300, 30)),
    ]
    async with FakeCollector() as collector, FakeOpenAI(script) as fake:
        env = bot_env(tmp_path, fake.base_url, OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint,
                      OTEL_BSP_SCHEDULE_DELAY="50", OTEL_SERVICE_NAME="tripbot-eu")
        first = await BotProcess(env).start()
        await first.send("plan a trip")
        await first.wait_line("? Which date?")
        await wait_posted(tmp_path)
        await first.send("the 5th")
        started = tmp_path / "started-t1"
        async with asyncio.timeout(20):
            while not started.exists():
                await asyncio.sleep(0.02)
        # what the first process finished has reached the collector: the trip, the paused
        # segment, both model calls and the question
        await collector.wait_for(lambda c: len(c.named("chat gpt-4o-mini")) == 2 and len(c.named("run segment")) == 1)
        await first.kill()  # the second segment dies mid-tool: its span is never exported
        second = await BotProcess(env).start()
        async with asyncio.timeout(20):
            while started.read_text() != "2":  # the interrupted tool call runs again after restart
                await asyncio.sleep(0.02)
        (tmp_path / "release-t1").write_text("go")
        await second.wait_line("Done for the 5th.")
        await second.close()  # a clean stop flushes the batched spans
        await collector.wait_for(lambda c: len(c.named("run segment")) == 2)

    spans = collector.spans
    assert {s.trace_id for s in spans} == {spans[0].trace_id}, "every span is in the one trace"
    assert {s.resource.get("service.name") for s in spans} == {"tripbot-eu"}  # the standard variable names it
    [trip] = collector.named("trip")
    assert trip.parent_id == "" and trip.attributes["run.no"] == 1
    segments = collector.named("run segment")
    assert all(s.parent_id == trip.span_id for s in segments)
    assert [s.attributes["run.outcome"] for s in segments] == ["paused", "answered"]
    assert segments[1].attributes["run.steps_before"] == 2  # the re-driven segment after the restart
    calls = collector.named("chat gpt-4o-mini")
    assert [(c.attributes["gen_ai.usage.input_tokens"], c.attributes["gen_ai.usage.output_tokens"]) for c in calls] == [
        (100, 10), (200, 20), (300, 30)]
    assert all(c.attributes["llm.attempts"] == 1 for c in calls)
    [asked] = collector.named("tool ask_human")
    assert asked.attributes["tool.paused"] is True and asked.status_code != 2
    [waited] = collector.named("tool wait_file")  # the run after the restart: it finished there
    assert waited.attributes["tool.result_chars"] == len("waited for t1") and '"tag": "t1"' in str(waited.attributes["tool.arguments"])
    assert waited.parent_id == segments[1].span_id
