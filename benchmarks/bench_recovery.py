"""Recovery sweep at start with 10,000 conversations waiting for an answer.

The database is made like this: a few conversations are driven through the real runtime (fake
model process) until their question is posted and they wait; the runtime stops; then their
rows (session, messages, question) are copied in bulk, with new ids and chat keys, up to N
waiting conversations, all in the schema the real migrations made. A fresh process then builds
the real runtime on that file and times `Runtime.start()` (store open + migrations check +
SessionManager.start(): a `resume` event for every interrupted run, a wake-up for every chat
with inbox rows, the outbox backlog handed to the delivery worker; waiting questions cost
nothing). After the sweep one of the copied conversations is
answered and must finish, re-driven from the store.

    python benchmarks/bench_recovery.py [--sessions 10000]

Prints ONE JSON line. Target: start() <= 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ANSWER, FINAL, ROOT, emit, guard_network, rss_bytes
from _fake_model import FakeModelProcess
from _runtimes import OursDriver

TARGET_S = 2.0
TEMPLATES = 20
SCRIPT = str(Path(__file__).resolve())


async def make_templates(base_url: str, db: Path) -> None:
    driver = OursDriver(base_url, db)
    await driver.open()
    try:
        await asyncio.gather(*(driver.ask(f"t-{i}") for i in range(TEMPLATES)))
        for i in range(TEMPLATES):
            await driver.wait_posted(f"t-{i}")
    finally:
        await driver.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def clone(db: Path, total: int) -> int:
    """Copy the waiting template conversations until `total` wait; returns how many wait."""
    conn = sqlite3.connect(str(db))
    try:
        s_cols, m_cols, q_cols = (_columns(conn, t) for t in ("sessions", "messages", "questions"))
        sessions = conn.execute(f"SELECT {', '.join(s_cols)} FROM sessions WHERE state = 'asking'").fetchall()
        copies = max(0, total - len(sessions))
        s_rows, m_rows, q_rows = [], [], []
        for j in range(copies):
            src = sessions[j % len(sessions)]
            sid = f"{src[0]}-c{j}"
            row = dict(zip(s_cols, src, strict=True))
            platform, chat_id, thread = str(row["chat_key"]).split(":", 2)
            row.update(id=sid, chat_key=f"{platform}:{chat_id}-c{j}:{thread}")
            s_rows.append(tuple(row[c] for c in s_cols))
            for m in conn.execute(f"SELECT {', '.join(m_cols)} FROM messages WHERE session_id = ?", (src[0],)):
                m_rows.append(tuple(sid if c == "session_id" else v for c, v in zip(m_cols, m, strict=True)))
            for q in conn.execute(f"SELECT {', '.join(q_cols)} FROM questions WHERE session_id = ? AND status = 'waiting'", (src[0],)):
                q_rows.append(tuple(sid if c == "session_id" else v for c, v in zip(q_cols, q, strict=True)))
        with conn:
            conn.executemany(f"INSERT INTO sessions ({', '.join(s_cols)}) VALUES ({', '.join('?' * len(s_cols))})", s_rows)
            conn.executemany(f"INSERT INTO messages ({', '.join(m_cols)}) VALUES ({', '.join('?' * len(m_cols))})", m_rows)
            conn.executemany(f"INSERT INTO questions ({', '.join(q_cols)}) VALUES ({', '.join('?' * len(q_cols))})", q_rows)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(conn.execute("SELECT COUNT(*) FROM questions WHERE status = 'waiting'").fetchone()[0])
    finally:
        conn.close()


async def measure(base_url: str, db: Path) -> dict[str, Any]:
    """In a fresh process: build the runtime, time start(), then answer one copied conversation."""
    driver = OursDriver(base_url, db)
    driver.build()  # build_runtime: imports, the LLM client, the token counter
    before = rss_bytes()
    started = time.monotonic()
    await driver.runtime.start()  # store open + migrations check + SessionManager.start()
    start_s = time.monotonic() - started
    after = rss_bytes()
    reposted = driver.surface.questions
    try:
        t = time.monotonic()
        final = await asyncio.wait_for(driver.reply("t-0-c0", ANSWER), 30)
        answer_s = time.monotonic() - t
    except Exception as exc:
        final, answer_s = f"{type(exc).__name__}: {exc}", float("nan")
    finally:
        await driver.close()
    return {"start_s": start_s, "rss_growth_mb": (after - before) / 2**20, "reposted": reposted,
            "resumed_ok": final == FINAL, "answer_to_final_ms": answer_s * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    guard_network()
    if args.measure:
        print(json.dumps(asyncio.run(measure(args.base_url, args.measure))), flush=True)
        return 0
    with FakeModelProcess() as fm, tempfile.TemporaryDirectory(prefix="bench-recovery-") as tmp:
        db = Path(tmp) / "bot.sqlite3"
        asyncio.run(make_templates(fm.base_url, db))
        waiting = clone(db, args.sessions)
        proc = subprocess.run(
            [sys.executable, SCRIPT, "--measure", str(db), "--base-url", fm.base_url],
            capture_output=True, text=True, cwd=ROOT, timeout=300,
        )
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if not lines:
            raise RuntimeError(f"measure failed: {proc.stderr[-500:]}")
        got = json.loads(lines[-1])
    emit({
        "bench": "recovery",
        "waiting": waiting,
        "start_s": round(got["start_s"], 3),
        "target_s": TARGET_S,
        "rss_growth_in_start_mb": round(got["rss_growth_mb"], 1),
        "questions_reposted": got["reposted"],
        "resumed_after_sweep": got["resumed_ok"],
        "answer_to_final_ms": round(got["answer_to_final_ms"], 2),
        "ok": got["start_s"] <= TARGET_S and got["resumed_ok"] and got["reposted"] == 0 and waiting == args.sessions,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
