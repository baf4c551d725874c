"""Time to the first visible token: from the model's first text chunk to the person seeing it.

For each surface the real runtime (store, SessionManager, agent, the LLM client streaming from
the fake OpenAI server) runs with the real adapter against its fake platform, in one process,
so one monotonic clock times both ends: the fake model records when it wrote a conversation's
first text chunk; the end is when the text reached the platform — Telegram: the first
`sendMessageDraft` the fake Bot API accepted (private chats); Slack: the `chat.startStream` the
fake Web API received; web: the first `delta` SSE event a browser-like client read.

Telegram and Slack conversations start at a pace inside the platforms' limits (Telegram's ~30
requests a second for the whole bot; Slack's one message a second per channel, one channel per
thread); the web starts 500 streams at once.

Prints ONE JSON line: per surface (`telegram_`, `slack_`, `web_`) the streams, p50/p99/max (ms)
and the target.

    python benchmarks/bench_first_token.py [--web 500] [--telegram 120] [--slack 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._common import emit, guard_network, ms, pct  # noqa: E402

TARGET_P99_MS = {"telegram": 150.0, "slack": 150.0, "web": 30.0}
GAP_MS = 100.0  # between a stream's chunks of 6 characters (about 15 tokens a second)
ANSWER = "Day 1: the Bund at dusk and a walk on Nanjing Road; Day 2: Yu Garden early, then the museum."
# new conversations a second: Telegram and Slack inside the platforms' limits; the web's 500 streams
# start over 25 seconds (about 35 write at any moment). All 500 at the same instant measured the
# start of 500 runs (store writes, token counts), not streaming: see the README's Performance.
START_RATE = {"telegram": 3.0, "slack": 5.0, "web": 20.0}


def _script(keys: list[str], latency_ms: float = 50) -> dict[str, list[Any]]:
    from tests.fakes.openai_server import reply

    # plain text: its first chunk is visible at once (an <answer> tag would hold it back a chunk)
    return {k: [reply(ANSWER, chunk_chars=6, chunk_gap_ms=GAP_MS, latency_ms=latency_ms)] for k in keys}


def _llm(base_url: str) -> Any:
    from agent_core.llm import LLM
    from agent_core.llm_config import LLMConfig

    return LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-bench", base_url=base_url, timeout_s=60, max_retries=0))


def _figures(name: str, delays: list[float], wanted: int, wall: float) -> dict[str, Any]:
    return {
        "streams": wanted, "seen": len(delays), "wall_s": round(wall, 2),
        "p50_ms": ms(statistics.median(delays)) if delays else None,
        "p99_ms": ms(pct(delays, 99)), "max_ms": ms(max(delays)) if delays else None,
        "target_p99_ms": TARGET_P99_MS[name],
    }


async def _paced(count: int, rate: float, start: Any) -> None:
    began = time.monotonic()
    for i in range(count):
        await asyncio.sleep(max(0.0, began + i / rate - time.monotonic()))
        await start(i)


# ------------------------------------------------------------------ Telegram


async def telegram(count: int, tmp: Path) -> dict[str, Any]:
    from tests.fakes.openai_server import FakeOpenAI
    from tests.fakes.telegram_api import FakeTelegram
    from tests.telegram_support import telegram_bot

    keys = [f"tg{i}" for i in range(count)]
    chats = {k: 50_000 + i for i, k in enumerate(keys)}
    async with FakeOpenAI(scripts=_script(keys)) as model, FakeTelegram() as tg, \
            telegram_bot(tmp, tg, model.base_url):
        began = time.monotonic()

        async def start(i: int) -> None:
            tg.send_text(chats[keys[i]], f"[conv:{keys[i]}] Two days in Shanghai")

        await _paced(count, START_RATE["telegram"], start)
        await tg.wait_for(lambda t: all(any(ANSWER[:20] in m.text for m in t.bot_messages(c)) for c in chats.values()),
                          within=120)
        wall = time.monotonic() - began
        first = {r.key: r.first_chunk_at for r in model.requests if r.first_chunk_at is not None}
        delays = [tg.drafts[chats[k]][0][2] - first[k] for k in keys if k in first and tg.drafts.get(chats[k])]
        figures = _figures("telegram", delays, count, wall)
        figures["rate_violations"] = len(tg.violations)
        figures["draft_requests"] = sum(len(v) for v in tg.drafts.values())
        return figures


# ------------------------------------------------------------------ Slack


async def slack(count: int, tmp: Path) -> dict[str, Any]:
    from tests.fakes.openai_server import FakeOpenAI
    from tests.fakes.slack_api import FakeSlack
    from tests.slack_support import slack_stack

    keys = [f"sl{i}" for i in range(count)]
    fake = FakeSlack(channels={f"C{i}": "channel" for i in range(count)})
    async with fake, FakeOpenAI(scripts=_script(keys)) as model, \
            slack_stack(tmp, fake=fake, chat_model=_llm(model.base_url), BOT_RATE_PER_USER=0) as s:
        threads: dict[str, str] = {}
        began = time.monotonic()

        async def start(i: int) -> None:
            msg = s.mention(channel=f"C{i}", text=f"[conv:{keys[i]}] two days in Shanghai")
            threads[msg.ts] = keys[i]
            await s.events.app_mention(msg)

        await _paced(count, START_RATE["slack"], start)
        await fake.wait_for(lambda f: len([c for c in f.calls_of("chat.stopStream") if not c.error]) >= count, 120)
        wall = time.monotonic() - began
        first = {r.key: r.first_chunk_at for r in model.requests if r.first_chunk_at is not None}
        shown: dict[str, float] = {}
        for call in fake.calls_of("chat.startStream"):
            key = threads.get(str(call.args.get("thread_ts")))
            if key is not None and not call.error:
                shown.setdefault(key, call.at)
        delays = [shown[k] - first[k] for k in keys if k in shown and k in first]
        figures = _figures("slack", delays, count, wall)
        figures["ratelimited"] = len([c for c in fake.calls if c.status == 429])
        return figures


# ------------------------------------------------------------------ web
# Three processes, as a deployment would have them: the fake model, the bot (web server), and
# the browsers. Their monotonic clocks are the same system clock.


async def _serve_web(db: Path, model_url: str) -> None:
    from adapters.runtime import freeze_startup_heap
    from tests.fakes.process import until_signalled
    from tests.web_runtime import web_settings, web_stack

    settings = web_settings(db, BOT_LOG_LEVEL="WARNING", BOT_RATE_PER_IP=0, BOT_RATE_PER_USER=0)
    async with web_stack(db, model=_llm(model_url), settings=settings) as stack:
        freeze_startup_heap()  # as bot.py does after start: without it a full GC pass stalls 50-150 ms
        print(json.dumps({"port": stack.server.port}), flush=True)
        await until_signalled()


async def _child(args: list[str]) -> tuple[asyncio.subprocess.Process, dict[str, Any]]:
    proc = await asyncio.create_subprocess_exec(sys.executable, *args, cwd=ROOT, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 60)
    return proc, json.loads(line)


async def web(count: int, tmp: Path) -> dict[str, Any]:
    import aiohttp

    keys = [f"web{i}" for i in range(count)]
    # the model thinks long enough for every browser to have its event stream open: a stream
    # opened after the first chunk would time its own connection, not the pipeline
    script = tmp / "script.json"
    script.write_text(json.dumps({"scripts": {k: [t.model_dump(mode="json") for t in v]
                                              for k, v in _script(keys, latency_ms=500).items()}}))
    model, info = await _child(["-m", "tests.fakes.openai_server", "--script", str(script)])
    bot, served = await _child([__file__, "--serve-web", str(tmp / "web.sqlite3"), "--model-url", info["base_url"]])
    base = f"http://127.0.0.1:{served['port']}"
    shown: dict[str, float] = {}
    connected: dict[str, float] = {}
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                         timeout=aiohttp.ClientTimeout(total=180)) as http:

            async def one(key: str) -> None:
                async with http.post(f"{base}/api/chat", json={"message": f"[conv:{key}] two days in Shanghai"}) as r:
                    sid = (await r.json())["session_id"]
                async with http.get(f"{base}/api/sessions/{sid}/events") as events:
                    connected[key] = time.monotonic()
                    event = ""
                    async for raw in events.content:
                        line = raw.decode().rstrip("\r\n")
                        if line.startswith("event:"):
                            event = line[6:].strip()
                        elif line.startswith("data:") and event == "delta" and key not in shown:
                            shown[key] = time.monotonic()
                        elif line.startswith("data:") and event in ("done", "error"):
                            return

            began = time.monotonic()
            tasks: list[asyncio.Task[None]] = []

            async def start(i: int) -> None:
                tasks.append(asyncio.create_task(one(keys[i])))

            await _paced(count, START_RATE["web"], start)
            await asyncio.gather(*tasks)
            wall = time.monotonic() - began
            async with http.get(f"{info['base_url'].removesuffix('/v1')}/_fake/state") as r:
                first: dict[str, float] = (await r.json())["first_chunks"]
    finally:
        for proc in (bot, model):
            proc.terminate()
            await proc.wait()
    late = [k for k in keys if k in first and connected.get(k, first[k]) >= first[k]]
    delays = [shown[k] - first[k] for k in keys if k in shown and k in first and k not in late]
    figures = _figures("web", delays, count - len(late), wall)
    figures["connected_after_first_chunk"] = len(late)
    return figures


async def run(args: argparse.Namespace) -> dict[str, Any]:
    measured: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, count, fn in (("telegram", args.telegram, telegram), ("slack", args.slack, slack),
                                ("web", args.web, web)):
            if count > 0:
                where = Path(tmp) / name
                where.mkdir()
                measured[name] = await fn(count, where)
    # flat, so `make bench`'s table shows the p99s first
    out: dict[str, Any] = {"bench": "first_token"}
    out.update({f"{name}_p99_ms": v["p99_ms"] for name, v in measured.items()})
    out["chunk_gap_ms"] = GAP_MS
    for name, figures in measured.items():
        out.update({f"{name}_{k}": v for k, v in figures.items() if k != "p99_ms"})
    out["ok"] = bool(measured) and all(
        v["seen"] == v["streams"] and v["p99_ms"] is not None and v["p99_ms"] <= v["target_p99_ms"]
        for v in measured.values())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--web", type=int, default=500)
    parser.add_argument("--telegram", type=int, default=90)
    parser.add_argument("--slack", type=int, default=100)
    parser.add_argument("--serve-web", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--model-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    guard_network()
    logging.basicConfig(level=logging.ERROR)
    if args.serve_web:
        asyncio.run(_serve_web(args.serve_web, args.model_url))
        return
    emit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
