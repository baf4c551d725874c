"""What tracing costs per agent step: the same scripted trip with tracing off and on, in one run.

The trip of benchmarks/_common.py (ask_human -> train_search -> hotel_search -> answer: four
steps, one model call each) runs through two runtimes in this process, alternating round by
round so background load hits both alike: `off` (no tracer, as shipped by default) and `on`
(the OpenTelemetry SDK with a batch span processor, as OTEL_EXPORTER_OTLP_ENDPOINT sets it up;
its exporter here only keeps the spans, so what is measured is what the step's path pays:
making, filling and queueing the spans, the export runs on the processor's thread). The model
is the fake server in its own process, with no latency. A step's time is the trip's wall time
over its four steps (the question's answer is given the moment it is posted). What tracing adds
is the difference of the medians, taken apart for the rounds that ran `off` first and those
that ran `on` first, and averaged (the second trip of a round meets the disk and the model
server at another moment of their rhythm than the first). The same figure is also given for the
CPU time of the event loop's thread (added_cpu_ms_per_step), where the spans are made: on two
shared cores the wall time also carries the scheduling of the model server's process and of
other work, which moved the wall figure by up to ±0.15 ms between runs of 150 rounds where the
CPU figure moved by ±0.03 ms. The target stays on the wall time.

Also measured, in tight loops: the spans of one step through the SDK (the floor of what the
trips show, without the disk's and the model server's noise), and what the off path does per step (the `tracer is None` checks and the
null context of agent_core.tracing.span, timed in a tight loop), to show it is not measurable
against a step.

    python benchmarks/bench_tracing.py [--rounds 150]

Target: on adds <= 0.2 ms per step over off (added_ms_per_step: the difference of the medians, as above).
Prints ONE JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import API_KEY, MODEL, ROOT, conv_text, emit, guard_network, ms
from _fake_model import FakeModelProcess
from _runtimes import BenchSurface, _prompt, our_tools

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

STEPS = 4
TARGET_MS = 0.2


class Traced:
    """Our runtime, tracing off (tracer None) or on (the SDK, spans kept by the exporter)."""

    def __init__(self, base_url: str, db_path: Path, tracing: bool) -> None:
        self.base_url, self.db_path, self.tracing = base_url, db_path, tracing
        self.surface = BenchSurface()
        self.exporter: Any = None
        self.provider: Any = None

    async def open(self) -> None:
        from adapters.runtime import build_runtime
        from agent_core.llm import LLM
        from agent_core.llm_config import LLMConfig
        from bot.settings import Settings

        tracer = None
        if self.tracing:
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
            from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

            self.exporter = InMemorySpanExporter()
            self.provider = TracerProvider()
            self.provider.add_span_processor(BatchSpanProcessor(self.exporter))
            tracer = self.provider.get_tracer("bench")
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None, db_path=self.db_path, openai_api_key=API_KEY, openai_base_url=self.base_url,
            human_timeout_s=86400, validate_plans=False, llm_model=MODEL, rate_per_user=0,
        )
        self.llm = LLM(LLMConfig(model=MODEL, api_key=API_KEY, base_url=self.base_url, timeout_s=120), tracer=tracer)
        self.runtime = build_runtime(settings, model=self.llm, tools=our_tools(), prompt=_prompt, serve_http=False,
                                     extra_surfaces=[self.surface], tracer=tracer)  # type: ignore[list-item]
        await self.runtime.start()

    async def _submit(self, key: str, text: str) -> None:
        from bot.surface import ChatKey, IncomingMessage

        msg = IncomingMessage(chat=ChatKey("bench", key), user_id=key, text=text, dedup_id=uuid.uuid4().hex)
        await self.runtime.manager.submit(msg)

    async def trip(self, key: str) -> tuple[float, float]:
        """Seconds per step of one whole trip: wall time, and CPU time of this (the event loop's) thread."""
        started, cpu = time.perf_counter(), time.thread_time()
        asked = self.surface.expect(key, "question")
        await self._submit(key, conv_text(key))
        await asked
        answered = self.surface.expect(key, "answer")
        await self._submit(key, "May 5th")
        await answered
        return (time.perf_counter() - started) / STEPS, (time.thread_time() - cpu) / STEPS

    def spans(self) -> int:
        if self.provider is None:
            return 0
        self.provider.force_flush()
        return len(self.exporter.get_finished_spans())

    async def close(self) -> None:
        await self.runtime.stop()
        await self.llm.aclose()
        if self.provider is not None:
            self.provider.shutdown()


def on_path_us_per_step(loops: int = 20_000) -> float:
    """The spans of one step made in a tight loop (a model call's and a tool call's, with the
    attributes the code sets), through the SDK and a batch processor: the floor of what the
    trip measurement shows, without the noise of the disk and the model server."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agent_core.tracing import span

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
    tracer = provider.get_tracer("bench")
    started = time.perf_counter()
    for _ in range(loops):
        with span(tracer, "chat gpt-4o-mini", {"gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL}) as s:
            s.set_attributes({"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
                              "llm.latency_ms": 1.0, "llm.attempts": 1})
        with span(tracer, "tool train_search", {"tool.name": "train_search", "tool.call_id": "c1",
                                                "tool.arguments": '{"depart_station": "北京"}'}) as s:
            s.set_attribute("tool.result_chars", 120)
            s.set_attribute("tool.ok", True)
    took = (time.perf_counter() - started) / loops * 1e6
    provider.shutdown()
    return took


def off_path_ns_per_step(loops: int = 200_000) -> float:
    """The off path of one step: a model call's and a tool call's span(None, ...) entered and
    left, and the `is_recording()` checks after them."""
    from agent_core.tracing import span

    started = time.perf_counter()
    for _ in range(loops):
        with span(None, "chat", None) as s:
            s.is_recording()
        with span(None, "tool", None) as s:
            s.is_recording()
    return (time.perf_counter() - started) / loops * 1e9


def added_ms(per_step: dict[str, list[float]]) -> float:
    """What `on` adds per step, in ms. The second trip of a round runs in a different moment of
    the disk's and the model server's rhythm than the first, so the rounds that ran off first
    and those that ran on first are compared apart (median against median), and the two
    differences averaged."""
    by_order = []
    for start in (0, 1):
        offs, ons = per_step["off"][start::2], per_step["on"][start::2]
        by_order.append(statistics.median(ons) - statistics.median(offs))
    return statistics.mean(by_order) * 1000


async def main(rounds: int) -> dict[str, Any]:
    guard_network()
    with FakeModelProcess() as fake, tempfile.TemporaryDirectory() as tmp:
        off = Traced(fake.base_url, Path(tmp) / "off.sqlite3", tracing=False)
        on = Traced(fake.base_url, Path(tmp) / "on.sqlite3", tracing=True)
        await off.open()
        await on.open()
        try:
            for i in range(5):  # warm both: connections, caches, the JIT-less interpreter's first paths
                await off.trip(f"warm-off-{i}")
                await on.trip(f"warm-on-{i}")
            per_step: dict[str, list[float]] = {"off": [], "on": []}
            cpu_per_step: dict[str, list[float]] = {"off": [], "on": []}
            for i in range(rounds):
                order = (off, on) if i % 2 == 0 else (on, off)
                for runtime in order:
                    name = "on" if runtime.tracing else "off"
                    wall, cpu = await runtime.trip(f"{name}-{i}")
                    per_step[name].append(wall)
                    cpu_per_step[name].append(cpu)
            spans = on.spans()
        finally:
            await off.close()
            await on.close()
    off_ms = statistics.median(per_step["off"]) * 1000
    on_ms = statistics.median(per_step["on"]) * 1000
    added = added_ms(per_step)
    return {
        "bench": "tracing", "rounds": rounds, "steps_per_trip": STEPS,
        "off_step_ms": round(off_ms, 3), "on_step_ms": round(on_ms, 3),
        "added_ms_per_step": round(added, 3), "target_ms": TARGET_MS,
        "added_cpu_ms_per_step": round(added_ms(cpu_per_step), 3),
        "on_path_us_per_step": round(on_path_us_per_step(), 1),
        "spans_per_step": round(spans / ((rounds + 5) * STEPS), 2),
        "off_path_ns_per_step": round(off_path_ns_per_step(), 1),
        "off_p90_step_ms": ms(sorted(per_step["off"])[int(0.9 * rounds)]),
        "on_p90_step_ms": ms(sorted(per_step["on"])[int(0.9 * rounds)]),
        "ok": added <= TARGET_MS,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=150)
    args = parser.parse_args()
    emit(asyncio.run(main(args.rounds)))
