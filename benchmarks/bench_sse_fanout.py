"""SSE fan-out: N web clients at once, each running a whole conversation (question + answer).

The server (real SqliteStore + SessionManager + WebAdapter + HttpServer, scripted model with
200 ms latency per call) runs in its own process so its RSS is its own; the clients run in a
few worker processes so client-side parsing does not pass for server latency. Every event
carries `ts` (when the surface produced it); a client records `now - ts` on arrival.

Prints ONE JSON line: clients, finished, p50/p99/max event latency (ms), wall time, server RSS.

    python benchmarks/bench_sse_fanout.py [--clients 500] [--latency-ms 200] [--procs 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from _common import cpu_seconds

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_P99_MS = 50.0


# ------------------------------------------------------------------ the server process


async def _serve(db: Path, latency_s: float) -> None:
    from adapters.runtime import freeze_startup_heap
    from tests.fakes.process import until_signalled
    from tests.web_runtime import web_model, web_settings, web_stack

    # every simulated browser comes from 127.0.0.1: the per-address limit would throttle the load itself
    settings = web_settings(db, BOT_LOG_LEVEL="WARNING", BOT_RATE_PER_IP=0)
    async with web_stack(db, model=web_model(latency_s=latency_s), settings=settings) as stack:
        freeze_startup_heap()  # as bot.py does after start
        print(json.dumps({"port": stack.server.port}), flush=True)
        await until_signalled()


# ------------------------------------------------------------------ the client processes


async def _events(resp) -> AsyncIterator[tuple[str, str]]:
    """(event, data) pairs from an aiohttp SSE response; comments come as ("", comment)."""
    event, data = "message", []
    async for raw in resp.content:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith(":"):
            yield "", line[1:].strip()
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


async def _conversation(
    session, n: int, start_at: float, spread_s: float, latencies: list[tuple[str, float]], connected: list[bool]
) -> bool:
    from tests.scripted_trip import DAYS

    rng = random.Random(n)
    # The client names its session and listens before it speaks, so every event is produced
    # while the stream is open: the latency measured is delivery, not a replay of the past.
    sid = f"bench{n:06d}{os.getpid()}"
    # An event stream opens only for a session the server knows (404 otherwise): a command
    # creates it (its notice is not measured).
    async with session.post("/api/chat", json={"message": "/status", "session_id": sid, "lang": "en"}) as res:
        if res.status != 200:
            return False
    async with session.get(f"/api/sessions/{sid}/events") as resp:
        events = _events(resp)
        await anext(events)  # the "connected" comment
        connected.append(time.time() < start_at)
        # Every stream is open before any conversation starts; people then type within
        # `spread_s` of each other and take a moment to answer, as people do.
        await asyncio.sleep(max(0.0, start_at + rng.uniform(0, spread_s) - time.time()))
        body = {"message": f"Beijing to Shanghai, trip {n}", "session_id": sid, "client_message_id": f"b{n}"}
        async with session.post("/api/chat", json=body) as res:
            if res.status != 200:
                return False
        answered = False
        async for name, data in events:
            if not name or name == "notice":
                continue  # keep-alive, or the reply to the command that created the session
            latencies.append((name, time.time() - json.loads(data)["ts"]))
            if name == "human_input_request" and not answered:
                answered = True
                await asyncio.sleep(rng.uniform(0.1, 0.5))
                answer = {"session_id": sid, "response": DAYS[n % 2]}
                async with session.post("/api/human_response", json=answer) as res:
                    if res.status != 200:
                        return False
            elif name == "done":
                return answered
            elif name == "error":
                return False
    return False


async def _clients(base_url: str, first: int, count: int, start_at: float, spread_s: float) -> dict[str, object]:
    import aiohttp

    latencies: list[tuple[str, float]] = []
    connected: list[bool] = []
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=60)
    async with aiohttp.ClientSession(base_url, connector=connector, timeout=timeout) as session:
        results = await asyncio.gather(
            *(_conversation(session, first + i, start_at, spread_s, latencies, connected) for i in range(count)),
            return_exceptions=True,
        )
    finished = sum(1 for r in results if r is True)
    failures = [repr(r) for r in results if r is not True][:3]
    cpu = time.process_time()
    return {
        "finished": finished, "latencies": latencies, "failures": failures,
        "open_before_start": sum(connected), "cpu_s": cpu,
    }


def _client_worker(base_url: str, first: int, count: int, start_at: float, spread_s: float, out: mp.Queue) -> None:  # type: ignore[type-arg]
    out.put(asyncio.run(_clients(base_url, first, count, start_at, spread_s)))


# ------------------------------------------------------------------ the driver


def _rss_mb(pid: int) -> float:
    import psutil

    return psutil.Process(pid).memory_info().rss / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--procs", type=int, default=4)
    parser.add_argument("--spread-s", type=float, default=1.0, help="conversations start within this window")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.db, args.latency_ms / 1000))
        return 0

    with tempfile.TemporaryDirectory(prefix="bench-sse-") as tmp:
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--db", str(Path(tmp) / "bench.sqlite3"), "--latency-ms", str(args.latency_ms)],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )
        try:
            assert server.stdout is not None
            port = json.loads(server.stdout.readline())["port"]
            base_url = f"http://127.0.0.1:{port}"
            idle_rss = _rss_mb(server.pid)
            cpu_before = cpu_seconds(server.pid)
            ctx = mp.get_context("spawn")
            out: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
            procs = max(1, min(args.procs, args.clients))
            share, extra = divmod(args.clients, procs)
            start_at = time.time() + 3.0 + args.clients / 200  # all streams open by then
            workers, first = [], 0
            for i in range(procs):
                count = share + (1 if i < extra else 0)
                w = ctx.Process(target=_client_worker, args=(base_url, first, count, start_at, args.spread_s, out))
                w.start()
                workers.append(w)
                first += count
            peak = idle_rss
            results: list[dict[str, object]] = []
            while len(results) < procs:
                try:
                    results.append(out.get(timeout=0.2))
                except Exception:  # queue.Empty: sample the server meanwhile
                    peak = max(peak, _rss_mb(server.pid))
                    if not any(w.is_alive() for w in workers) and out.empty():
                        break
            wall = time.time() - start_at
            for w in workers:
                w.join(timeout=10)
            peak = max(peak, _rss_mb(server.pid))
            end_rss = _rss_mb(server.pid)
            server_cpu = cpu_seconds(server.pid) - cpu_before
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()

    pairs = [tuple(x) for r in results for x in r["latencies"]]  # type: ignore[attr-defined]
    latencies = sorted(x for _, x in pairs)
    by_event: dict[str, list[float]] = {}
    for name, x in pairs:
        by_event.setdefault(str(name), []).append(float(x))
    finished = sum(int(r["finished"]) for r in results)  # type: ignore[call-overload]
    failures = [f for r in results for f in r["failures"]][:3]  # type: ignore[attr-defined]
    open_before = sum(int(r["open_before_start"]) for r in results)  # type: ignore[call-overload]

    def pct(p: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000, 2) if latencies else -1.0

    p99 = pct(0.99)
    line = {
        "bench": "sse_fanout",
        "clients": args.clients,
        "finished": finished,
        "streams_open_before_start": open_before,
        "start_spread_s": args.spread_s,
        "model_latency_ms": args.latency_ms,
        "events": len(latencies),
        "p50_ms": pct(0.50),
        "p99_ms": p99,
        "max_ms": round(latencies[-1] * 1000, 2) if latencies else -1.0,
        "mean_ms": round(statistics.fmean(latencies) * 1000, 2) if latencies else -1.0,
        "p99_by_event_ms": {k: round(sorted(v)[min(len(v) - 1, int(0.99 * len(v)))] * 1000, 2) for k, v in by_event.items()},
        "target_p99_ms": TARGET_P99_MS,
        "wall_s": round(wall, 2),
        "server_rss_idle_mb": round(idle_rss, 1),
        "server_rss_peak_mb": round(peak, 1),
        "server_rss_end_mb": round(end_rss, 1),
        "client_procs": procs,
        "server_cpu_s": round(server_cpu, 2),
        "clients_cpu_s": round(sum(float(r["cpu_s"]) for r in results), 2),  # type: ignore[arg-type]
        "cpus": os.cpu_count(),
        "ok": finished == args.clients and 0 <= p99 <= TARGET_P99_MS,
    }
    if failures:
        line["failures"] = failures
    print(json.dumps(line))
    return 0 if line["ok"] else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
