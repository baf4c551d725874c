-- The PostgreSQL twin of migrations/0009_suggestions.sql: messages kept as suggestions until the
-- person who asked for the trip says Yes or No.
CREATE TABLE suggestions (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL,
    chat_key    TEXT NOT NULL,
    status      TEXT NOT NULL,
    body        TEXT NOT NULL,
    sender_id   TEXT NOT NULL,
    asked_of    TEXT NOT NULL,
    created_at  DOUBLE PRECISION NOT NULL,
    decided_by  TEXT,
    decided_at  DOUBLE PRECISION
);
CREATE INDEX suggestions_by_session ON suggestions(session_id, created_at);
