"""Model-call retries: tenacity (one long-lived AsyncRetrying per client, as agent_core/llm_retry.py
uses it) against the openai SDK's own retries (`AsyncOpenAI(max_retries=4)`), with the bare
client (no retries) as the floor.

The fake model runs in its own process (tests/fakes/openai_server.py with a responder); each variant is agent_core.llm.LLM with only
its retry machinery changed: a
message "f<N>-<id>" fails its first N attempts with 503 and `retry-after-ms: 20` (both
policies obey it, so both wait the same), then answers. Measured per call, sequentially:

    clean      no fault: wall time and this process's CPU time per call (the cost of the
               retry machinery on the path every call takes)
    retried    two 503s, then the answer: wall and CPU per call
    garbage    objects only the collector can free, per call (collector off, DEBUG_SAVEALL),
               for the clean and the retried path
    observed   whether each failed attempt reached the metrics observer (it does through
               ours; the SDK retries inside, where no hook sees the attempts)

    python benchmarks/bench_llm_retries.py [--calls 400] [--retried 40]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import emit, guard_network  # noqa: E402

RETRY_AFTER_MS = 20


async def _serve() -> None:
    from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply, fault, reply
    from tests.fakes.process import until_signalled

    seen: Counter[str] = Counter()

    def respond(rec: RecordedRequest) -> Any:
        text = str(rec.messages[-1].get("content") or "")
        seen[text] += 1
        faults = int(text[1 : text.index("-")]) if text.startswith("f") and "-" in text else 0
        if seen[text] <= faults:
            return fault(503, retry_after_ms=RETRY_AFTER_MS)
        out: Reply = reply("ok")
        return out

    fake = FakeOpenAI(responder=respond, record=False)
    await fake.start()
    print(json.dumps({"base_url": fake.base_url}), flush=True)
    await until_signalled()
    await fake.close()


class Variant:
    """agent_core.llm.LLM as shipped (tenacity), or the same client with its retry policy swapped
    for the SDK's own retries, or for none (the floor): only the retry machinery differs."""

    def __init__(self, base_url: str, name: str) -> None:
        import openai

        from agent_core.llm import LLM
        from agent_core.llm_config import LLMConfig
        from agent_core.llm_retry import GaveUp
        from agent_core.schema import Message

        variant = self
        self.name = name
        self.failed_attempts_seen = 0

        class Observer:
            def on_call(self, seconds: float, prompt_tokens: int, completion_tokens: int) -> None:
                pass

            def on_error(self, kind: str) -> None:
                variant.failed_attempts_seen += 1

        self._message = Message
        self.llm = LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-bench", base_url=base_url, max_retries=4,
                                 backoff_base_s=0.02, backoff_cap_s=0.1), observer=Observer())
        if name != "tenacity":
            async def once(attempt: Any, kwargs: Any, failures: list[str]) -> Any:
                outcome = await attempt(kwargs, failures)
                return GaveUp(outcome, 1) if isinstance(outcome, openai.APIError) else outcome

            # the same client and transport, only the SDK's retries set
            connection = self.llm._connection
            connection.client = connection.client.with_options(timeout=60, max_retries=4 if name == "sdk" else 0)
            self.llm._retrying = once  # type: ignore[assignment]

    async def call(self, text: str) -> str:
        return await self.llm.ask([self._message.user(text)])

    async def close(self) -> None:
        await self.llm.aclose()


async def _timed(variant: Variant, texts: list[str]) -> tuple[float, float]:
    """Median wall ms and mean CPU ms per call."""
    walls = []
    cpu0 = time.process_time()
    for text in texts:
        t0 = time.perf_counter()
        assert await variant.call(text) == "ok"
        walls.append(time.perf_counter() - t0)
    cpu = (time.process_time() - cpu0) / len(texts)
    return round(statistics.median(walls) * 1000, 3), round(cpu * 1000, 3)


async def _garbage(variant: Variant, texts: list[str]) -> float:
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for text in texts:
            await variant.call(text)
    finally:
        gc.collect()
        found = len(gc.garbage)
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    return round(found / len(texts), 2)


async def measure(base_url: str, calls: int, retried: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for variant in (Variant(base_url, "tenacity"), Variant(base_url, "sdk"), Variant(base_url, "bare")):
        name = variant.name
        try:
            for i in range(20):  # warm-up: connections, caches
                await variant.call(f"f0-warm-{name}-{i}")
            out[f"{name}_clean_ms"], out[f"{name}_clean_cpu_ms"] = await _timed(
                variant, [f"f0-{name}-{i}" for i in range(calls)])
            out[f"{name}_clean_garbage_per_call"] = await _garbage(variant, [f"f0-g-{name}-{i}" for i in range(50)])
            if name != "bare":
                out[f"{name}_retried_ms"], out[f"{name}_retried_cpu_ms"] = await _timed(
                    variant, [f"f2-{name}-{i}" for i in range(retried)])
                out[f"{name}_retried_garbage_per_call"] = await _garbage(
                    variant, [f"f2-g-{name}-{i}" for i in range(20)])
                out[f"{name}_failed_attempts_observed"] = variant.failed_attempts_seen
        finally:
            await variant.close()
    out["failed_attempts_made"] = (retried + 20) * 2
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--retried", type=int, default=40)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve())
        return
    guard_network()
    logging.disable(logging.WARNING)  # the per-attempt warnings (ours) and retry notes (the SDK's) alike
    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert server.stdout is not None
        base_url = json.loads(server.stdout.readline())["base_url"]
        started = time.monotonic()
        figures = asyncio.run(measure(base_url, args.calls, args.retried))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(10)
    overhead = figures["tenacity_clean_cpu_ms"] - figures["bare_clean_cpu_ms"]
    sdk_overhead = figures["sdk_clean_cpu_ms"] - figures["bare_clean_cpu_ms"]
    ok = figures["tenacity_clean_garbage_per_call"] == 0 and figures["tenacity_retried_garbage_per_call"] == 0
    emit({"bench": "llm_retries", "calls": args.calls, "retried_calls": args.retried, "retry_after_ms": RETRY_AFTER_MS,
          **figures, "tenacity_cpu_overhead_ms": round(overhead, 3), "sdk_cpu_overhead_ms": round(sdk_overhead, 3),
          "wall_s": round(time.monotonic() - started, 1), "ok": ok})


if __name__ == "__main__":
    main()
