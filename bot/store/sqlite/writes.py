"""SQLite's writes of a chat's inbox, outbox and sign-offs (those of its session and runs are in
bot.store.sqlite.run_writes), as plain functions of a sqlite3 connection.

Each takes its write's record (bot.store.writes) as keyword arguments and runs on the writer
thread inside its own SAVEPOINT of a group-committed transaction (bot.store.sqlite.writer): a
function either completes or leaves no trace. Message bodies arrive already serialised, so the
writer thread only runs SQL. PostgreSQL's twins are the functions of migrations/postgres/0014 and 0016.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from bot.store.reads import OPEN_SIGNOFF
from bot.store.rows import ChatEvent, stored


def insert(conn: sqlite3.Connection, table: str, row: object, *, replace: bool = False) -> None:
    """Insert a row (a bot.store.rows dataclass) by its columns' names."""
    values = stored(row)
    names = ", ".join(values)
    conn.execute(f"INSERT {'OR REPLACE ' if replace else ''}INTO {table} ({names}) "
                 f"VALUES ({', '.join(':' + n for n in values)})", values)


# -- the inbox -----------------------------------------------------------------------------------
def add_inbox(conn: sqlite3.Connection, platform: str, dedup_id: str, chat_key: str, body: str, received_at: float,
              notify: bool) -> int | None:
    # one process serves every chat: there is nobody to notify
    cur = conn.execute(
        "INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at) "
        "VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING",
        (platform, dedup_id, chat_key, body, received_at),
    )
    return cur.lastrowid if cur.rowcount == 1 else None


def add_events(conn: sqlite3.Connection, events: Sequence[ChatEvent], now: float) -> None:
    conn.executemany(
        "INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at, kind) "
        "VALUES ('internal', ?, ?, ?, 'pending', ?, ?) ON CONFLICT DO NOTHING",
        [(e.dedup_id, e.chat_key, e.body, now, e.kind) for e in events],
    )


def close_inbox(conn: sqlite3.Connection, inbox_ids: Sequence[int]) -> None:
    if inbox_ids:
        conn.executemany("UPDATE inbox SET status = 'done' WHERE id = ?", [(i,) for i in inbox_ids])


def finish_inbox(conn: sqlite3.Connection, inbox_id: int, drop_earlier: bool) -> None:
    if drop_earlier:  # /cancel and /new also discard the messages sent before them
        conn.execute(
            "UPDATE inbox SET status = 'done' WHERE status = 'pending' AND kind = 'message' AND id < ? "
            "AND chat_key = (SELECT chat_key FROM inbox WHERE id = ?)",
            (inbox_id, inbox_id),
        )
    conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))


def fail_inbox(conn: sqlite3.Connection, inbox_id: int, error: str) -> None:
    conn.execute("UPDATE inbox SET status = 'failed', error = ? WHERE id = ?", (error, inbox_id))


def notice_inbox(conn: sqlite3.Connection, inbox_id: int, chat_key: str, session_id: str, body: str,
                 now: float) -> int:
    conn.execute("UPDATE inbox SET noticed = 1 WHERE id = ?", (inbox_id,))
    return queue_outbox(conn, chat_key, session_id, "notice", body, now)


# -- the outbox ----------------------------------------------------------------------------------
def queue_outbox(conn: sqlite3.Connection, chat_key: str, session_id: str, kind: str, body: str, now: float,
                 tool_call_id: str | None = None) -> int:
    cur = conn.execute(
        "INSERT INTO outbox (session_id, chat_key, kind, body, status, created_at, tool_call_id) "
        "VALUES (?, ?, ?, ?, 'pending', ?, ?)",
        (session_id, chat_key, kind, body, now, tool_call_id),
    )
    return int(cur.lastrowid or 0)


def outbox_part_sent(conn: sqlite3.Connection, outbox_id: int, parts_sent: int, message_id: str) -> None:
    conn.execute("UPDATE outbox SET parts_sent = ?, message_id = ? WHERE id = ?", (parts_sent, message_id, outbox_id))


def record_watermark(conn: sqlite3.Connection, outbox_id: int) -> int | None:
    """A question's watermark, recorded before its first posting attempt and kept: a re-post after
    a kill between the platform taking it and outbox_sent must not move it past an answer. An
    attempt that failed clears it (outbox_attempt_failed)."""
    row = conn.execute(
        "UPDATE questions SET first_post_after = COALESCE(first_post_after, (SELECT COALESCE(MAX(id), 0) FROM inbox)) "
        "WHERE (session_id, tool_call_id) = (SELECT session_id, tool_call_id FROM outbox WHERE id = ? "
        "AND kind = 'question') RETURNING first_post_after",
        (outbox_id,),
    ).fetchone()
    return None if row is None else int(row[0])


def outbox_sent(conn: sqlite3.Connection, outbox_id: int, parts_sent: int, message_id: str | None,
                posted_after: int | None) -> None:
    conn.execute(
        "UPDATE outbox SET status = 'sent', parts_sent = ?, message_id = COALESCE(?, message_id) WHERE id = ?",
        (parts_sent, message_id, outbox_id),
    )
    row = conn.execute(
        "SELECT session_id, tool_call_id, message_id FROM outbox WHERE id = ? AND kind = 'question'", (outbox_id,)
    ).fetchone()
    if row is not None:  # posted: from now on a message can answer it (the inbox watermark)
        # the watermark recorded before the first attempt (record_watermark); without one, the
        # newest id now: one writer commits in call order, so every update stored before this
        # write is below it
        conn.execute(
            "UPDATE questions SET posted_message_id = ?, "
            "posted_after = COALESCE(first_post_after, ?, (SELECT COALESCE(MAX(id), 0) FROM inbox)) "
            "WHERE session_id = ? AND tool_call_id = ?",
            (row[2], posted_after, row[0], row[1]),
        )


def outbox_attempt_failed(conn: sqlite3.Connection, outbox_id: int, error: str) -> None:
    conn.execute("UPDATE outbox SET attempts = attempts + 1, error = ? WHERE id = ?", (error, outbox_id))
    # a question's attempt that failed did not reach the chat: the next attempt records its own
    # watermark (only one cut short by a kill, its outcome unknown, keeps it)
    conn.execute(
        "UPDATE questions SET first_post_after = NULL WHERE posted_after IS NULL AND (session_id, tool_call_id) = "
        "(SELECT session_id, tool_call_id FROM outbox WHERE id = ? AND kind = 'question')",
        (outbox_id,),
    )


def outbox_failed(conn: sqlite3.Connection, outbox_id: int, error: str, event: ChatEvent | None, now: float) -> None:
    conn.execute("UPDATE outbox SET status = 'failed', attempts = attempts + 1, error = ? WHERE id = ?",
                 (error, outbox_id))
    if event is not None:  # a question: its chat is told, once (the event's dedup id)
        add_events(conn, [event], now)


def retry_outbox(conn: sqlite3.Connection, outbox_id: int) -> str | None:
    row = conn.execute(
        "UPDATE outbox SET status = 'pending', attempts = 0 WHERE id = ? AND status = 'failed' AND kind <> 'question' "
        "RETURNING chat_key",
        (outbox_id,),
    ).fetchone()
    return str(row[0]) if row else None


# -- sign-offs -----------------------------------------------------------------------------------
def decide_signoff(conn: sqlite3.Connection, signoff_id: str, status: str, by: str, reason: str | None,
                   inbox_id: int | None, outbox: Sequence[Sequence[str]], now: float) -> list[int] | None:
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
    return [queue_outbox(conn, chat_key, session_id, kind, body, now) for kind, body in outbox]


def signoff_reminded(conn: sqlite3.Connection, signoff_id: str, inbox_id: int | None,
                     outbox: Sequence[Sequence[str]], now: float) -> list[int] | None:
    cur = conn.execute(f"UPDATE signoffs SET reminded = 1 WHERE id = ? AND reminded = 0 AND {OPEN_SIGNOFF}",
                       (signoff_id,))
    if inbox_id is not None:
        conn.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (inbox_id,))
    if cur.rowcount != 1:
        return None
    session_id, chat_key = conn.execute("SELECT session_id, chat_key FROM signoffs WHERE id = ?", (signoff_id,)).fetchone()
    return [queue_outbox(conn, chat_key, session_id, kind, body, now) for kind, body in outbox]


def add_approver(conn: sqlite3.Connection, platform: str, channel_id: str, user_id: str, added_by: str,
                 now: float) -> None:
    conn.execute(
        "INSERT INTO channel_approvers (platform, channel_id, user_id, added_by, added_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (platform, channel_id, user_id, added_by, now),
    )


WRITES = (add_inbox, add_events, finish_inbox, fail_inbox, notice_inbox, queue_outbox, outbox_part_sent, record_watermark,
          outbox_sent, outbox_attempt_failed, outbox_failed, retry_outbox, decide_signoff, signoff_reminded, add_approver)
