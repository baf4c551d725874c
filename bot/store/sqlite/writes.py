"""The store's writes as plain functions of a sqlite3 connection.

Each runs on the writer thread inside its own SAVEPOINT of a group-committed transaction
(bot.store.sqlite.writer): a function either completes or leaves no trace. Message bodies arrive
already serialised, so the writer thread only runs SQL.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Sequence
from typing import Any

from bot.store.base import ChatEvent, RunUsage, TurnStart

SESSION_COLS = (
    "id, chat_key, state, lang, asker_id, asker_name, run_no, run_steps, request, location, created_at, updated_at, "
    "run_started_at, prompt_tokens, completion_tokens, llm_calls, cost_usd, trace_parent"
)
RUN_COLS = (
    "session_id, run_no, chat_key, model, segments, steps, prompt_tokens, completion_tokens, llm_calls, cost_usd, "
    "outcome, started_at, updated_at"
)
QUESTION_COLS = (
    "session_id, tool_call_id, question, options, asker_id, asked_at, deadline, posted_message_id, status, posted_after, "
    "remind_at, addressee"
)
OUTBOX_COLS = (
    "id, session_id, chat_key, kind, body, created_at, status, attempts, parts_sent, message_id, error, tool_call_id"
)
SIGNOFF_COLS = (
    "id, session_id, chat_key, status, approvers, requested_at, remind_at, deadline, reminded, decided_by, "
    "decided_at, reason"
)
OPEN_SIGNOFF = "status IN ('waiting', 'rejecting')"
Row = tuple[Any, ...]


def append(conn: sqlite3.Connection, session_id: str, bodies: Sequence[str]) -> None:
    if bodies:  # each row takes the next sequence number of its session
        conn.executemany(
            "INSERT INTO messages (session_id, seq, body) "
            "SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM messages WHERE session_id = ?",
            [(session_id, body, session_id) for body in bodies],
        )


def add_inbox(conn: sqlite3.Connection, platform: str, dedup_id: str, chat_key: str, body: str,
              received_at: float | None = None) -> int | None:
    cur = conn.execute(
        "INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at) "
        "VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING",
        (platform, dedup_id, chat_key, body, time.time() if received_at is None else received_at),
    )
    return cur.lastrowid if cur.rowcount == 1 else None


def add_events(conn: sqlite3.Connection, events: Sequence[ChatEvent]) -> None:
    now = time.time()
    conn.executemany(
        "INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at, kind) "
        "VALUES ('internal', ?, ?, ?, 'pending', ?, ?) ON CONFLICT DO NOTHING",
        [(e.dedup_id, e.chat_key, e.body, now, e.kind) for e in events],
    )


def close_inbox(conn: sqlite3.Connection, inbox_ids: Sequence[int]) -> None:
    if inbox_ids:
        conn.executemany("UPDATE inbox SET status = 'done' WHERE id = ?", [(i,) for i in inbox_ids])


def fail_inbox(conn: sqlite3.Connection, inbox_id: int, error: str) -> None:
    conn.execute("UPDATE inbox SET status = 'failed', error = ? WHERE id = ?", (error[:500], inbox_id))


def finish_inbox(conn: sqlite3.Connection, inbox_id: int, drop_earlier: bool) -> None:
    if drop_earlier:  # /cancel and /new also discard the messages sent before them
        conn.execute(
            "UPDATE inbox SET status = 'done' WHERE status = 'pending' AND kind = 'message' AND id < ? "
            "AND chat_key = (SELECT chat_key FROM inbox WHERE id = ?)",
            (inbox_id, inbox_id),
        )
    conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))


def remember_location(conn: sqlite3.Connection, chat_key: str, location: str, lang: str) -> None:
    now = time.time()
    cur = conn.execute(
        "UPDATE sessions SET location = ?, updated_at = ? WHERE chat_key = ? AND closed = 0", (location, now, chat_key)
    )
    if cur.rowcount == 0:
        conn.execute(
            "INSERT INTO sessions (id, chat_key, state, lang, location, created_at, updated_at) "
            "VALUES (?, ?, 'idle', ?, ?, ?, ?)",
            (uuid.uuid4().hex, chat_key, lang, location, now, now),
        )


def start_turn(conn: sqlite3.Connection, turn: TurnStart, body: str) -> Row:
    now = time.time()
    row = conn.execute("SELECT id FROM sessions WHERE chat_key = ? AND closed = 0", (turn.chat_key,)).fetchone()
    if row is None:
        sid = turn.new_session_id or uuid.uuid4().hex
        conn.execute(
            "INSERT INTO sessions (id, chat_key, state, lang, asker_id, asker_name, run_no, run_steps, request, "
            "location, created_at, updated_at, run_started_at, trace_parent) "
            "VALUES (?, ?, 'working', ?, ?, ?, 1, 0, ?, ?, ?, ?, ?, ?)",
            (sid, turn.chat_key, turn.lang, turn.asker_id, turn.asker_name, turn.request, turn.location, now, now, now,
             turn.trace_parent),
        )
    else:
        sid = row[0]
        conn.execute(
            "UPDATE sessions SET state = 'working', lang = ?, asker_id = ?, asker_name = ?, run_no = run_no + 1, "
            "run_steps = 0, request = ?, location = COALESCE(?, location), updated_at = ?, run_started_at = ?, "
            "trace_parent = ? WHERE id = ?",
            (turn.lang, turn.asker_id, turn.asker_name, turn.request, turn.location, now, now, turn.trace_parent, sid),
        )
    append(conn, sid, [body])
    conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (turn.inbox_id,))
    # a new turn supersedes a plan still waiting for sign-off (or records why it was rejected)
    conn.execute(
        f"UPDATE signoffs SET status = ?, decided_by = COALESCE(NULLIF(?, ''), decided_by), decided_at = ?, "
        f"reason = NULLIF(?, '') WHERE session_id = ? AND {OPEN_SIGNOFF}",
        ("rejected" if turn.rejected_by else "superseded", turn.rejected_by, now, turn.reason, sid),
    )
    fresh = conn.execute(f"SELECT {SESSION_COLS} FROM sessions WHERE id = ?", (sid,)).fetchone()
    return tuple(fresh)


def append_step(
    conn: sqlite3.Connection, session_id: str, bodies: Sequence[str], step: int, inbox_done: Sequence[int]
) -> None:
    append(conn, session_id, bodies)
    conn.execute("UPDATE sessions SET run_steps = ? WHERE id = ?", (step, session_id))
    close_inbox(conn, inbox_done)


def pause(
    conn: sqlite3.Connection, session_id: str, bodies: Sequence[str], questions: Sequence[Row], step: int,
    inbox_done: Sequence[int], usage: RunUsage | None = None,
) -> list[int]:
    append(conn, session_id, bodies)
    conn.executemany(
        f"INSERT OR REPLACE INTO questions ({QUESTION_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 'waiting', NULL, ?, ?)",
        questions,
    )
    conn.execute(
        "UPDATE sessions SET state = 'asking', run_steps = ?, updated_at = ? WHERE id = ?", (step, time.time(), session_id)
    )
    close_inbox(conn, inbox_done)
    chat_key, lang, asker_name = conn.execute(
        "SELECT chat_key, lang, asker_name FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if usage is not None:  # the segment's cost, in the same commit
        add_usage(conn, usage)
    return [queue_outbox(conn, chat_key, session_id, "question", question_json(q, lang, asker_name), tool_call_id=q[1])
            for q in questions]


def question_json(question: Row, lang: str, asker_name: str) -> str:
    """A question's outbox body (bot.delivery.bodies.question_body builds the same): the person asked is
    the one mentioned, by id when known, else by the handle the request used."""
    return json.dumps(
        {"tool_call_id": question[1], "question": question[2], "options": json.loads(question[3]), "lang": lang,
         "user_id": question[4], "user_name": question[8] or asker_name},
        ensure_ascii=False,
    )


def finish_run(
    conn: sqlite3.Connection, session_id: str, bodies: Sequence[str], outbox: Sequence[tuple[str, str]],
    inbox_done: Sequence[int], signoff: Row | None = None, usage: RunUsage | None = None,
) -> list[int]:
    append(conn, session_id, bodies)
    conn.execute("UPDATE sessions SET state = ?, updated_at = ? WHERE id = ?",
                 ("signoff" if signoff else "idle", time.time(), session_id))
    if signoff is not None:
        conn.execute(f"INSERT INTO signoffs ({SIGNOFF_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", signoff)
    close_inbox(conn, inbox_done)
    (chat_key,) = conn.execute("SELECT chat_key FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if usage is not None:  # the segment's cost, in the same commit
        add_usage(conn, usage)
    return [queue_outbox(conn, chat_key, session_id, kind, body) for kind, body in outbox]


def interrupt(
    conn: sqlite3.Connection, session_id: str, bodies: Sequence[str], close: bool, notice: str | None
) -> None:
    append(conn, session_id, bodies)
    conn.execute("UPDATE questions SET status = 'cancelled' WHERE session_id = ? AND status = 'waiting'", (session_id,))
    conn.execute(f"UPDATE signoffs SET status = 'cancelled' WHERE session_id = ? AND {OPEN_SIGNOFF}", (session_id,))
    conn.execute(
        "UPDATE sessions SET state = 'idle', closed = ?, updated_at = ? WHERE id = ?",
        (1 if close else 0, time.time(), session_id),
    )
    if notice is not None:
        (chat_key,) = conn.execute("SELECT chat_key FROM sessions WHERE id = ?", (session_id,)).fetchone()
        queue_outbox(conn, chat_key, session_id, "notice", notice)


def close_session(conn: sqlite3.Connection, chat_key: str) -> None:
    conn.execute("UPDATE sessions SET closed = 1, state = 'idle' WHERE chat_key = ? AND closed = 0", (chat_key,))


def add_usage(conn: sqlite3.Connection, usage: RunUsage) -> None:
    u = usage
    conn.execute(
        "UPDATE sessions SET prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, "
        "llm_calls = llm_calls + ?, cost_usd = cost_usd + ? WHERE id = ?",
        (u.prompt_tokens, u.completion_tokens, u.llm_calls, u.cost_usd, u.session_id),
    )
    now = time.time()
    conn.execute(
        f"INSERT INTO runs ({RUN_COLS}) "
        "SELECT ?, ?, chat_key, ?, 1, ?, ?, ?, ?, ?, ?, ?, ? FROM sessions WHERE id = ? "
        "ON CONFLICT (session_id, run_no) DO UPDATE SET model = excluded.model, segments = segments + 1, "
        "steps = excluded.steps, prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
        "completion_tokens = completion_tokens + excluded.completion_tokens, "
        "llm_calls = llm_calls + excluded.llm_calls, cost_usd = cost_usd + excluded.cost_usd, "
        "outcome = excluded.outcome, updated_at = excluded.updated_at",
        (u.session_id, u.run_no, u.model, u.steps, u.prompt_tokens, u.completion_tokens, u.llm_calls, u.cost_usd,
         u.outcome, now, now, u.session_id),
    )


def resolve_question(
    conn: sqlite3.Connection, session_id: str, tool_call_id: str, body: str, status: str, inbox_id: int | None
) -> bool:
    cur = conn.execute(
        "UPDATE questions SET status = ? WHERE session_id = ? AND tool_call_id = ? AND status = 'waiting'",
        (status, session_id, tool_call_id),
    )
    if cur.rowcount != 1:
        return False
    append(conn, session_id, [body])
    conn.execute(  # the run resumes once every question of its turn is answered or expired
        "UPDATE sessions SET state = 'working', updated_at = ? WHERE id = ? AND NOT EXISTS "
        "(SELECT 1 FROM questions WHERE session_id = ? AND status = 'waiting')",
        (time.time(), session_id, session_id),
    )
    if inbox_id is not None:
        conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    return True


def remind(
    conn: sqlite3.Connection, session_id: str, tool_call_id: str, body: str, inbox_id: int
) -> int | None:
    cur = conn.execute(
        "UPDATE questions SET remind_at = NULL WHERE session_id = ? AND tool_call_id = ? AND status = 'waiting' "
        "AND remind_at IS NOT NULL",
        (session_id, tool_call_id),
    )
    conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    if cur.rowcount != 1:
        return None
    (chat_key,) = conn.execute("SELECT chat_key FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return queue_outbox(conn, chat_key, session_id, "reminder", body, tool_call_id=tool_call_id)


# -- sign-offs -------------------------------------------------------------------------------
def decide_signoff(
    conn: sqlite3.Connection, signoff_id: str, status: str, by: str, reason: str | None, inbox_id: int | None,
    outbox: Sequence[tuple[str, str]],
) -> list[int] | None:
    now = time.time()
    cur = conn.execute(
        f"UPDATE signoffs SET status = ?, decided_by = ?, decided_at = ?, reason = COALESCE(?, reason) "
        f"WHERE id = ? AND {OPEN_SIGNOFF}",
        (status, by, now, reason, signoff_id),
    )
    if cur.rowcount != 1:
        return None
    session_id, chat_key = conn.execute("SELECT session_id, chat_key FROM signoffs WHERE id = ?", (signoff_id,)).fetchone()
    if status in ("approved", "expired"):
        conn.execute("UPDATE sessions SET state = 'idle', updated_at = ? WHERE id = ? AND state = 'signoff'",
                     (now, session_id))
    if inbox_id is not None:
        conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    return [queue_outbox(conn, chat_key, session_id, kind, body) for kind, body in outbox]


def signoff_reminded(
    conn: sqlite3.Connection, signoff_id: str, inbox_id: int | None, outbox: Sequence[tuple[str, str]]
) -> list[int] | None:
    cur = conn.execute(f"UPDATE signoffs SET reminded = 1 WHERE id = ? AND reminded = 0 AND {OPEN_SIGNOFF}",
                       (signoff_id,))
    if inbox_id is not None:
        conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    if cur.rowcount != 1:
        return None
    session_id, chat_key = conn.execute("SELECT session_id, chat_key FROM signoffs WHERE id = ?", (signoff_id,)).fetchone()
    return [queue_outbox(conn, chat_key, session_id, kind, body) for kind, body in outbox]


def add_approver(conn: sqlite3.Connection, platform: str, channel_id: str, user_id: str, added_by: str) -> None:
    conn.execute(
        "INSERT INTO channel_approvers (platform, channel_id, user_id, added_by, added_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (platform, channel_id, user_id, added_by, time.time()),
    )


# -- the outbox ------------------------------------------------------------------------------
def queue_outbox(
    conn: sqlite3.Connection, chat_key: str, session_id: str, kind: str, body: str, tool_call_id: str | None = None
) -> int:
    cur = conn.execute(
        "INSERT INTO outbox (session_id, chat_key, kind, body, status, created_at, tool_call_id) "
        "VALUES (?, ?, ?, ?, 'pending', ?, ?)",
        (session_id, chat_key, kind, body, time.time(), tool_call_id),
    )
    return int(cur.lastrowid or 0)


def notice_inbox(conn: sqlite3.Connection, inbox_id: int, chat_key: str, session_id: str, body: str) -> int:
    conn.execute("UPDATE inbox SET noticed = 1 WHERE id = ?", (inbox_id,))
    return queue_outbox(conn, chat_key, session_id, "notice", body)


def outbox_part_sent(conn: sqlite3.Connection, outbox_id: int, parts_sent: int, message_id: str) -> None:
    conn.execute(
        "UPDATE outbox SET parts_sent = ?, message_id = ? WHERE id = ?", (parts_sent, message_id, outbox_id)
    )


def outbox_sent(conn: sqlite3.Connection, outbox_id: int, parts_sent: int, message_id: str | None) -> None:
    conn.execute(
        "UPDATE outbox SET status = 'sent', parts_sent = ?, message_id = COALESCE(?, message_id) WHERE id = ?",
        (parts_sent, message_id, outbox_id),
    )
    row = conn.execute(
        "SELECT session_id, tool_call_id, message_id FROM outbox WHERE id = ? AND kind = 'question'", (outbox_id,)
    ).fetchone()
    if row is not None:  # posted: from now on a message can answer it (the inbox watermark)
        conn.execute(
            "UPDATE questions SET posted_message_id = ?, posted_after = (SELECT COALESCE(MAX(id), 0) FROM inbox) "
            "WHERE session_id = ? AND tool_call_id = ?",
            (row[2], row[0], row[1]),
        )


def retry_outbox(conn: sqlite3.Connection, outbox_id: int) -> str | None:
    row = conn.execute(
        "UPDATE outbox SET status = 'pending', attempts = 0 WHERE id = ? AND status = 'failed' AND kind <> 'question' "
        "RETURNING chat_key",
        (outbox_id,),
    ).fetchone()
    return str(row[0]) if row else None


def outbox_attempt_failed(conn: sqlite3.Connection, outbox_id: int, error: str) -> None:
    conn.execute("UPDATE outbox SET attempts = attempts + 1, error = ? WHERE id = ?", (error[:500], outbox_id))


def outbox_failed(conn: sqlite3.Connection, outbox_id: int, error: str) -> None:
    conn.execute(
        "UPDATE outbox SET status = 'failed', attempts = attempts + 1, error = ? WHERE id = ?", (error[:500], outbox_id)
    )
    row = conn.execute(
        "SELECT chat_key, session_id, tool_call_id FROM outbox WHERE id = ? AND kind = 'question'", (outbox_id,)
    ).fetchone()
    if row is not None:  # the chat's task decides what a question nobody can see means for the run
        body = json.dumps({"session_id": row[1], "tool_call_id": row[2], "error": error[:500]}, ensure_ascii=False)
        add_events(conn, [ChatEvent(row[0], "undeliverable", body, f"undeliverable:{outbox_id}")])
