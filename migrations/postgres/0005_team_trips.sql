-- The PostgreSQL twin of migrations/0006_team_trips.sql: a question can be addressed to one
-- traveller, and several wait at once in a chat (one per person).
ALTER TABLE questions ADD COLUMN addressee TEXT NOT NULL DEFAULT '';

-- A finished team plan waits for an approver's sign-off (see the SQLite twin).
CREATE TABLE signoffs (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL,
    chat_key     TEXT NOT NULL,
    status       TEXT NOT NULL,
    approvers    TEXT NOT NULL DEFAULT '[]',
    requested_at DOUBLE PRECISION NOT NULL,
    remind_at    DOUBLE PRECISION NOT NULL,
    deadline     DOUBLE PRECISION NOT NULL,
    reminded     INTEGER NOT NULL DEFAULT 0,
    decided_by   TEXT,
    decided_at   DOUBLE PRECISION,
    reason       TEXT
);
CREATE INDEX signoffs_by_session ON signoffs(session_id, requested_at);
CREATE INDEX signoffs_open ON signoffs(deadline) WHERE status IN ('waiting', 'rejecting');

CREATE TABLE channel_approvers (
    platform   TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    added_by   TEXT NOT NULL,
    added_at   DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (platform, channel_id, user_id)
);
