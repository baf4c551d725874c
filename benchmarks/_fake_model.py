"""The scripted model for the benchmarks: tests.fakes.openai_server.FakeOpenAI in its own process.

Every runtime under test talks to it over HTTP on 127.0.0.1. It serves the scripted trip of
benchmarks/_common.py (ask_human -> train_search -> hotel_search -> answer), with the model
latency written in the conversation key ("-L1000-" = 1 s), records nothing but the arrival time
of each request per conversation and the time its reply was ready to go (the latency over: the
fake's own event loop, busy with other requests, wakes up late at times), and hands those out on
a small control port. A request arrives once its body is in, before the fake parses and checks
it: that work (0.6 ms at the median, 2.5 at p99, with 50 conversations) is within the model's
latency, as a real model server's is, instead of in the steps of the client.

    GET /arrivals?prefix=P   -> {key: [monotonic seconds, ...]} for keys starting with P (then forgotten)
    GET /ready?prefix=P      -> the same for the replies' ready times

    python benchmarks/_fake_model.py      prints {"base_url": ..., "control": ...} once it listens

Arrival times are time.monotonic() (CLOCK_MONOTONIC, shared by every process on the machine),
so a client process can line them up with its own clock.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field

from _common import FINAL, MISSING, ROOT, latency_of, next_turn
from aiohttp import web

from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply, call, reply
from tests.fakes.process import until_signalled


@dataclass
class Arrivals:
    by_key: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    ready: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def take(self, prefix: str, ready: bool = False) -> dict[str, list[float]]:
        times = self.ready if ready else self.by_key
        keys = [k for k in times if k.startswith(prefix)]
        return {k: times.pop(k) for k in keys}


def make_responder(arrivals: Arrivals):  # type: ignore[no-untyped-def]
    async def respond(rec: RecordedRequest) -> Reply:
        # the model's latency counts from the request's arrival (its body in), before the fake
        # parsed and checked it (its own work, not the client's), and is held here to stamp its end
        arrivals.by_key[rec.key].append(rec.received_at)
        name, args = next_turn(rec.messages)
        await asyncio.sleep(max(0.0, rec.received_at + latency_of(rec.key) / 1000 - time.monotonic()))
        arrivals.ready[rec.key].append(time.monotonic())
        if name == "final":
            return reply(FINAL)
        if name == "missing":
            return reply(MISSING)
        return reply(tool_calls=[call(name, args)])

    return respond


async def serve() -> None:
    arrivals = Arrivals()
    fake = FakeOpenAI(responder=make_responder(arrivals), record=False)
    await fake.start()

    async def take(request: web.Request) -> web.Response:
        return web.json_response(arrivals.take(request.query.get("prefix", "")))

    async def take_ready(request: web.Request) -> web.Response:
        return web.json_response(arrivals.take(request.query.get("prefix", ""), ready=True))

    app = web.Application()
    app.router.add_get("/arrivals", take)
    app.router.add_get("/ready", take_ready)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    print(json.dumps({"base_url": fake.base_url, "control": f"http://127.0.0.1:{port}"}), flush=True)
    await until_signalled()
    await runner.cleanup()
    await fake.close()


class FakeModelProcess:
    """Start/stop the fake model process from a benchmark (a context manager)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.base_url = ""
        self.control = ""

    def __enter__(self) -> FakeModelProcess:
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "benchmarks" / "_fake_model.py")],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first:
            raise RuntimeError("the fake model process did not start")
        info = json.loads(first)
        self.base_url, self.control = info["base_url"], info["control"]
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


async def fetch_arrivals(control: str, prefix: str, ready: bool = False) -> dict[str, list[float]]:
    """The requests' arrival times by conversation (`ready`: their replies' ready times)."""
    import httpx

    async with httpx.AsyncClient(timeout=30) as client:
        res = await client.get(f"{control}/{'ready' if ready else 'arrivals'}", params={"prefix": prefix})
        res.raise_for_status()
        return dict(res.json())


if __name__ == "__main__":
    asyncio.run(serve())
