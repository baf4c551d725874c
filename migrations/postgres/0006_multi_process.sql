-- Several bot processes on one database (README, Run several processes).
--
-- A message set aside while the chat's question waits (or handed to a working run) has had its
-- notice ("answer my question first", "noted") queued: the chat's next owner must neither
-- repeat that notice nor treat the row as work to take the chat for
-- (bot.store.postgres.leases.unowned_chats_with_work). The twin of migrations/0007_inbox_noticed.sql.
ALTER TABLE inbox ADD COLUMN noticed INTEGER NOT NULL DEFAULT 0;

-- The web chat's events travel between processes (bot.store.postgres.web_events): the process that
-- runs a chat writes each event here and NOTIFYs the session id; a process serving that
-- session's event stream reads what it has not seen. Rows are pruned after an hour: the page
-- rebuilds older state from GET /api/sessions/{id}. PostgreSQL only (one SQLite process keeps
-- its events in memory).
CREATE TABLE web_events (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id  TEXT NOT NULL,
    origin      TEXT NOT NULL,                   -- the process that produced it (bot.store.postgres.leases.new_owner_id)
    event       TEXT NOT NULL,
    data        TEXT NOT NULL,                   -- JSON text, as the SSE frame carries it
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX web_events_by_session ON web_events(session_id, id);
CREATE INDEX web_events_by_age ON web_events(created_at);
