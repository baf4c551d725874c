"""Shared pieces of the benchmark scripts: the scripted trip, figures, RSS, the network guard.

The scripted conversation is the same for every runtime (ours, LangGraph, the OpenAI Agents
SDK, the bare client): the model asks the person the date (ask_human), then calls
train_search, then hotel_search, then answers. The fake model decides each turn from what the
conversation already holds (see `next_turn`), so any framework's message layout is served the
same four turns.
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODEL = "gpt-4o-mini"
API_KEY = "sk-bench"
SYSTEM_PROMPT = (
    "You are a travel planner. Ask the person for facts only they know with ask_human, "
    "search trains with train_search and hotels with hotel_search, then answer."
)
REQUEST = "Plan a weekend trip from Beijing to Shanghai for me."
QUESTION = "Which date do you want to leave?"
ANSWER = "May 5th"
# the parameter names of the real travel tools (the crash soak runs bot.py with them)
TRAIN_ARGS = {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2026-05-05"}
HOTEL_ARGS = {"city_name": "上海", "checkin_date": "2026-05-05"}
TRAIN_RESULT = json.dumps(
    {"trains": [{"no": "G1", "depart": "07:00", "arrive": "11:29", "price": 553.5},
                {"no": "G3", "depart": "08:00", "arrive": "12:32", "price": 553.5}]}
)
HOTEL_RESULT = json.dumps(
    {"hotels": [{"name": "Bund View Hotel", "stars": 4, "price": 620},
                {"name": "Jing'an Garden Inn", "stars": 3, "price": 380}]}
)
FINAL = "Take G1 at 07:00 on May 5th and stay at the Bund View Hotel (620 a night)."
MISSING = "The answer to the question never reached the model."
_LATENCY_RE = re.compile(r"-L(\d+)-")


def conv_text(key: str) -> str:
    """The first user message: carries the conversation key for the fake model."""
    return f"[conv:{key}] {REQUEST}"


def latency_of(key: str) -> float:
    """Model latency (ms) encoded in a conversation key: "...-L1000-..." means 1 s."""
    found = _LATENCY_RE.search(key)
    return float(found.group(1)) if found else 0.0


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def next_turn(messages: Sequence[dict[str, Any]]) -> tuple[str, dict[str, Any] | None]:
    """The scripted model: ("tool", args) for the next tool call, or ("text", None) for the answer.

    Returns the tool name (or "final"/"missing") and its arguments.
    """
    called = {
        tc.get("function", {}).get("name")
        for m in messages if m.get("role") == "assistant"
        for tc in (m.get("tool_calls") or [])
    }
    if "ask_human" not in called:
        return "ask_human", {"inquire": QUESTION}
    if "train_search" not in called:
        answered = any(
            ANSWER in _text(m.get("content")) for m in messages if m.get("role") in ("tool", "user")
        )
        return ("train_search", TRAIN_ARGS) if answered else ("missing", None)
    if "hotel_search" not in called:
        return "hotel_search", HOTEL_ARGS
    return "final", None


# ------------------------------------------------------------------ figures


def pct(values: Iterable[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); NaN for no values."""
    data = sorted(values)
    if not data:
        return math.nan
    rank = max(1, math.ceil(p / 100 * len(data)))
    return data[min(rank, len(data)) - 1]


def overhead_per_step(steps_ms: Sequence[float | None] | None, floor_ms: Sequence[float | None] | None) -> float | None:
    """A runtime's overhead per step over the floor (the bare client), in ms: the mean over the
    conversation's four steps of (the step's median - the floor's median for that step).

    Not the median of all steps pooled: the four steps differ by a factor of two or more (a step
    that waits for the person's message to be stored, one that only calls the model), so the
    pooled values fall in two clusters and their median lands anywhere in the gap between them
    (in one run, the same code measured 0.62 ms in one script and 1.10 ms in the other)."""
    if not steps_ms or not floor_ms or len(steps_ms) != len(floor_ms):
        return None
    diffs = [a - b for a, b in zip(steps_ms, floor_ms, strict=True) if a is not None and b is not None]
    return round(sum(diffs) / len(diffs), 2) if len(diffs) == len(steps_ms) else None


def ms(seconds: float, nd: int = 2) -> float | None:
    return None if seconds is None or math.isnan(seconds) else round(seconds * 1000, nd)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process (0 once it is gone), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def component_cpu(model_pid: int, bot_pids: Iterable[int]) -> dict[str, float]:
    """CPU seconds so far of the bot processes, every PostgreSQL process and the fake model (a
    snapshot: take one before and one after, and subtract)."""
    return {"bots": sum(cpu_seconds(p) for p in bot_pids), "postgres": sum(cpu_seconds(p) for p in postgres_pids()),
            "model": cpu_seconds(model_pid)}


def speed_probe_ms(rounds: int = 3) -> float:
    """The best of `rounds` runs of a fixed pure-Python loop (2 million additions), in ms. The
    shared machine's speed moves: a loop of 10 million took 0.61 s and 0.91 s a minute apart, and
    the CPU a conversation costs moved with it; a benchmark prints this beside its figures."""
    best = float("inf")
    for _ in range(rounds):
        started, total = time.perf_counter(), 0
        for i in range(2_000_000):
            total += i
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def postgres_pids() -> list[int]:
    """The machine's PostgreSQL server processes (each backend is one)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() == "postgres":
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def rss_bytes() -> int:
    import psutil

    gc.collect()
    return int(psutil.Process().memory_info().rss)


def file_bytes(path: Path) -> int:
    """Bytes of a SQLite database with its WAL folded in (checkpointed through a side connection)."""
    import sqlite3

    if not path.exists():
        return 0
    conn = sqlite3.connect(str(path))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    total = path.stat().st_size
    for suffix in ("-wal", "-journal"):
        extra = path.with_name(path.name + suffix)
        if extra.exists():
            total += extra.stat().st_size
    return total


def emit(line: dict[str, Any]) -> None:
    """The one JSON line a benchmark prints."""
    print(json.dumps(line, ensure_ascii=False), flush=True)


# ------------------------------------------------------------------ safety


def _loopback_only(event: str, args: tuple[Any, ...]) -> None:
    if event != "socket.connect":
        return
    address = args[1]
    if isinstance(address, tuple) and address:
        host = str(address[0])
        if not (host.startswith("127.") or host in ("::1", "localhost", "::ffff:127.0.0.1")):
            raise ConnectionRefusedError(f"benchmarks talk to 127.0.0.1 only, not {host}")


def guard_network() -> None:
    """Refuse any connection that is not to the loopback interface (an audit hook), and keep the
    frameworks' telemetry off."""
    os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    os.environ["LANGSMITH_TRACING"] = "false"
    os.environ["LANGCHAIN_TRACING_V2"] = "false"
    os.environ.pop("LANGSMITH_API_KEY", None)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        os.environ.pop(name, None)
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    sys.addaudithook(_loopback_only)
