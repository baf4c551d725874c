"""SQLite's writes of a chat's session and its runs: a turn, a step, a pause, a run's end, an
interruption, the usage, a question's answer and reminder. The records are bot.store.writes';
each function runs on the writer thread inside its own SAVEPOINT (bot.store.sqlite.writer), so
it completes or leaves no trace. PostgreSQL's twins are the `bot_<name>(w jsonb)` functions of
migrations/postgres/0014_one_record_writes.sql and of the later migrations that add a write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from bot.store.reads import OPEN_SIGNOFF
from bot.store.rows import (
    QuestionRow,
    RunUsage,
    SessionRow,
    SignoffRow,
    TurnStart,
    columns,
    message_body,
)
from bot.store.sqlite.writes import close_inbox, insert, queue_outbox

_SESSION_COLUMNS = columns(SessionRow).split(", ")
_SESSION_BY_ID = f"SELECT {columns(SessionRow)} FROM sessions WHERE id = ?"


def append(conn: sqlite3.Connection, session_id: str, bodies: Sequence[str]) -> None:
    if bodies:  # each row takes the next sequence number of its session
        conn.executemany(
            "INSERT INTO messages (session_id, seq, body) "
            "SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM messages WHERE session_id = ?",
            [(session_id, body, session_id) for body in bodies],
        )


def chat_of(conn: sqlite3.Connection, session_id: str) -> str:
    (chat_key,) = conn.execute("SELECT chat_key FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return str(chat_key)


def remember_location(conn: sqlite3.Connection, chat_key: str, location: str, lang: str, new_session_id: str,
                      now: float) -> None:
    cur = conn.execute(
        "UPDATE sessions SET location = ?, updated_at = ? WHERE chat_key = ? AND closed = 0", (location, now, chat_key)
    )
    if cur.rowcount == 0:
        conn.execute(
            "INSERT INTO sessions (id, chat_key, state, lang, location, created_at, updated_at) "
            "VALUES (?, ?, 'idle', ?, ?, ?, ?)",
            (new_session_id, chat_key, lang, location, now, now),
        )


def start_turn(conn: sqlite3.Connection, turn: TurnStart, now: float) -> dict[str, Any]:
    t = turn
    row = conn.execute("SELECT id FROM sessions WHERE chat_key = ? AND closed = 0", (t.chat_key,)).fetchone()
    if row is None:
        sid = t.new_session_id
        conn.execute(
            "INSERT INTO sessions (id, chat_key, state, lang, asker_id, asker_name, run_no, run_steps, request, "
            "location, created_at, updated_at, run_started_at, trace_parent) "
            "VALUES (?, ?, 'working', ?, ?, ?, 1, 0, ?, ?, ?, ?, ?, ?)",
            (sid, t.chat_key, t.lang, t.asker_id, t.asker_name, t.request, t.location, now, now, now, t.trace_parent),
        )
    else:
        sid = row[0]
        conn.execute(
            "UPDATE sessions SET state = 'working', lang = ?, asker_id = ?, asker_name = ?, run_no = run_no + 1, "
            "run_steps = 0, request = ?, location = COALESCE(?, location), updated_at = ?, run_started_at = ?, "
            "trace_parent = ? WHERE id = ?",
            (t.lang, t.asker_id, t.asker_name, t.request, t.location, now, now, t.trace_parent, sid),
        )
    append(conn, sid, [message_body(t.message)])
    conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (t.inbox_id,))
    # a new turn supersedes a plan still waiting for sign-off (or records why it was rejected)
    conn.execute(
        f"UPDATE signoffs SET status = ?, decided_by = COALESCE(NULLIF(?, ''), decided_by), decided_at = ?, "
        f"reason = NULLIF(?, '') WHERE session_id = ? AND {OPEN_SIGNOFF}",
        ("rejected" if t.rejected_by else "superseded", t.rejected_by, now, t.reason, sid),
    )
    fresh = conn.execute(_SESSION_BY_ID, (sid,)).fetchone()
    return dict(zip(_SESSION_COLUMNS, fresh, strict=True))


def append_step(conn: sqlite3.Connection, session_id: str, messages: Sequence[str], step: int,
                inbox_done: Sequence[int]) -> None:
    append(conn, session_id, messages)
    conn.execute("UPDATE sessions SET run_steps = ? WHERE id = ?", (step, session_id))
    close_inbox(conn, inbox_done)


def pause(conn: sqlite3.Connection, session_id: str, messages: Sequence[str], questions: Sequence[QuestionRow],
          postings: Sequence[str], step: int, inbox_done: Sequence[int], usage: RunUsage | None,
          now: float) -> list[int]:
    append(conn, session_id, messages)
    for q in questions:
        insert(conn, "questions", q, replace=True)
    conn.execute("UPDATE sessions SET state = 'asking', run_steps = ?, updated_at = ? WHERE id = ?",
                 (step, now, session_id))
    close_inbox(conn, inbox_done)
    if usage is not None:  # the segment's cost, in the same commit
        add_usage(conn, usage, now)
    chat_key = chat_of(conn, session_id)
    return [queue_outbox(conn, chat_key, session_id, "question", body, now, tool_call_id=q.tool_call_id)
            for q, body in zip(questions, postings, strict=True)]


def finish_run(conn: sqlite3.Connection, session_id: str, messages: Sequence[str], outbox: Sequence[Sequence[str]],
               inbox_done: Sequence[int], signoff: SignoffRow | None, usage: RunUsage | None,
               now: float) -> list[int]:
    append(conn, session_id, messages)
    conn.execute("UPDATE sessions SET state = ?, updated_at = ? WHERE id = ?",
                 ("signoff" if signoff else "idle", now, session_id))
    if signoff is not None:
        insert(conn, "signoffs", signoff)
    close_inbox(conn, inbox_done)
    if usage is not None:  # the segment's cost, in the same commit
        add_usage(conn, usage, now)
    chat_key = chat_of(conn, session_id)
    return [queue_outbox(conn, chat_key, session_id, kind, body, now) for kind, body in outbox]


def interrupt(conn: sqlite3.Connection, session_id: str, messages: Sequence[str], close: bool, notice: str | None,
              now: float) -> None:
    append(conn, session_id, messages)
    conn.execute("UPDATE questions SET status = 'cancelled' WHERE session_id = ? AND status = 'waiting'", (session_id,))
    conn.execute(f"UPDATE signoffs SET status = 'cancelled' WHERE session_id = ? AND {OPEN_SIGNOFF}", (session_id,))
    conn.execute("UPDATE sessions SET state = 'idle', closed = ?, updated_at = ? WHERE id = ?",
                 (1 if close else 0, now, session_id))
    if notice is not None:
        queue_outbox(conn, chat_of(conn, session_id), session_id, "notice", notice, now)


def close_session(conn: sqlite3.Connection, chat_key: str) -> None:
    conn.execute("UPDATE sessions SET closed = 1, state = 'idle' WHERE chat_key = ? AND closed = 0", (chat_key,))


def add_usage(conn: sqlite3.Connection, usage: RunUsage, now: float) -> None:
    u = usage
    conn.execute(
        "UPDATE sessions SET prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, "
        "llm_calls = llm_calls + ?, cost_usd = cost_usd + ? WHERE id = ?",
        (u.prompt_tokens, u.completion_tokens, u.llm_calls, u.cost_usd, u.session_id),
    )
    conn.execute(
        "INSERT INTO runs (session_id, run_no, chat_key, model, segments, steps, prompt_tokens, completion_tokens, "
        "llm_calls, cost_usd, outcome, started_at, updated_at) "
        "SELECT ?, ?, chat_key, ?, 1, ?, ?, ?, ?, ?, ?, ?, ? FROM sessions WHERE id = ? "
        "ON CONFLICT (session_id, run_no) DO UPDATE SET model = excluded.model, segments = segments + 1, "
        "steps = excluded.steps, prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
        "completion_tokens = completion_tokens + excluded.completion_tokens, "
        "llm_calls = llm_calls + excluded.llm_calls, cost_usd = cost_usd + excluded.cost_usd, "
        "outcome = excluded.outcome, updated_at = excluded.updated_at",
        (u.session_id, u.run_no, u.model, u.steps, u.prompt_tokens, u.completion_tokens, u.llm_calls, u.cost_usd,
         u.outcome, now, now, u.session_id),
    )


def resolve_question(conn: sqlite3.Connection, session_id: str, tool_call_id: str, message: str, status: str,
                     inbox_id: int | None, now: float) -> bool:
    cur = conn.execute(
        "UPDATE questions SET status = ? WHERE session_id = ? AND tool_call_id = ? AND status = 'waiting'",
        (status, session_id, tool_call_id),
    )
    if cur.rowcount != 1:
        return False
    append(conn, session_id, [message])
    conn.execute(  # the run resumes once every question of its turn is answered or expired
        "UPDATE sessions SET state = 'working', updated_at = ? WHERE id = ? AND NOT EXISTS "
        "(SELECT 1 FROM questions WHERE session_id = ? AND status = 'waiting')",
        (now, session_id, session_id),
    )
    if inbox_id is not None:
        conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    return True


def remind(conn: sqlite3.Connection, session_id: str, tool_call_id: str, body: str, inbox_id: int,
           now: float) -> int | None:
    cur = conn.execute(
        "UPDATE questions SET remind_at = NULL WHERE session_id = ? AND tool_call_id = ? AND status = 'waiting' "
        "AND remind_at IS NOT NULL",
        (session_id, tool_call_id),
    )
    conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    if cur.rowcount != 1:
        return None
    return queue_outbox(conn, chat_of(conn, session_id), session_id, "reminder", body, now, tool_call_id=tool_call_id)


WRITES = (remember_location, start_turn, append_step, pause, finish_run, interrupt, close_session, add_usage,
          resolve_question, remind)
