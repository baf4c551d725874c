"""The model client's transport: agent_core.model_transport (aiohttp's connections behind the
SDK's httpx2 interface, as shipped) against httpx2's own (httpcore2), the SDK's default.

The same agent_core.llm.LLM, only its `transport` differs, against the fake model in its own
process (benchmarks/_fake_model.py, the scripted trip's first turn, a 200 ms model). Each round
makes `--conc` calls at once, whole replies and then streamed; rounds alternate between the two
transports so that the machine's moods hit both alike. Per call: this process's CPU (the mean
over the rounds) and the wall time of a round over the model's 200 ms.

  cpu_ms_per_call   {transport: {whole, streamed}}: the CPU a call costs the bot
  ratio             ours / httpx2's, whole and streamed (target: below 1)

    python benchmarks/bench_model_transport.py [--conc 50] [--rounds 12]

Prints ONE JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import httpx2
from _common import emit, guard_network
from _fake_model import FakeModelProcess

from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from agent_core.model_transport import ModelTransport
from agent_core.schema import Message

MODEL_MS = 200
TRANSPORTS = ("ours", "httpx2")
TOOLS = [{"type": "function", "function": {"name": name, "description": f"{name} (the scripted trip's tools)",
                                            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
         for name in ("ask_human", "train_search", "hotel_search", "terminate")]


def make(base_url: str, name: str, stream: bool) -> LLM:
    transport = ModelTransport() if name == "ours" else httpx2.AsyncHTTPTransport(
        limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100))  # the SDK's limits
    config = LLMConfig(model="gpt-4o-mini", api_key="sk-bench", base_url=base_url, timeout_s=60, stream=stream)
    return LLM(config, transport=transport)


async def one_round(llm: LLM, prefix: str, conc: int, stream: bool) -> tuple[float, float]:
    async def call(i: int) -> None:
        messages = [Message.user(f"[conv:{prefix}-{i}-L{MODEL_MS}-] Beijing to Shanghai, 3 days")]
        if stream:
            async for _ in llm.stream_tool(messages, tools=TOOLS):
                pass
        else:
            await llm.ask_tool(messages, tools=TOOLS)

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(call(i) for i in range(conc)))
    return (time.process_time() - cpu0) * 1000 / conc, (time.perf_counter() - wall0) * 1000 - MODEL_MS


async def measure(base_url: str, conc: int, rounds: int) -> dict[str, Any]:
    clients = {(name, stream): make(base_url, name, stream) for name in TRANSPORTS for stream in (False, True)}
    cpu: dict[tuple[str, bool], list[float]] = {key: [] for key in clients}
    over: dict[tuple[str, bool], list[float]] = {key: [] for key in clients}
    try:
        for (name, stream), llm in clients.items():  # warm-up: connections, caches
            await one_round(llm, f"w-{name}-{stream}", conc, stream)
        for r in range(rounds):
            for (name, stream), llm in clients.items():
                c, w = await one_round(llm, f"r{r}-{name}-{stream}", conc, stream)
                cpu[(name, stream)].append(c)
                over[(name, stream)].append(w)
    finally:
        for llm in clients.values():
            await llm.aclose()

    def fig(values: dict[tuple[str, bool], list[float]], name: str, reduce: Any) -> dict[str, float]:
        return {"whole": round(reduce(values[(name, False)]), 3), "streamed": round(reduce(values[(name, True)]), 3)}

    cpu_ms = {name: fig(cpu, name, statistics.mean) for name in TRANSPORTS}
    return {
        "cpu_ms_per_call": cpu_ms,
        "round_over_model_ms_median": {name: fig(over, name, statistics.median) for name in TRANSPORTS},
        "ratio": {kind: round(cpu_ms["ours"][kind] / cpu_ms["httpx2"][kind], 2) for kind in ("whole", "streamed")},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conc", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    guard_network()
    started = time.monotonic()
    with FakeModelProcess() as fm:
        figures = asyncio.run(measure(fm.base_url, args.conc, args.rounds))
    emit({"bench": "model_transport", "conc": args.conc, "rounds": args.rounds, "model_ms": MODEL_MS, **figures,
          "wall_s": round(time.monotonic() - started, 1), "ok": max(figures["ratio"].values()) < 1})


if __name__ == "__main__":
    main()
