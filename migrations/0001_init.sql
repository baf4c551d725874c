-- Sessions, their messages, pending questions, the inbox of incoming updates, the outbox of answers.

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    chat_key      TEXT NOT NULL,            -- platform:chat_id:thread_id
    state         TEXT NOT NULL,            -- idle | running | waiting
    lang          TEXT NOT NULL DEFAULT 'zh',
    asker_id      TEXT NOT NULL DEFAULT '',
    asker_name    TEXT NOT NULL DEFAULT '',
    run_no        INTEGER NOT NULL DEFAULT 0,
    run_steps     INTEGER NOT NULL DEFAULT 0,
    request       TEXT NOT NULL DEFAULT '', -- the message that started the current run
    location      TEXT,                     -- JSON {latitude, longitude, label} or NULL
    closed        INTEGER NOT NULL DEFAULT 0,
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL
);
CREATE UNIQUE INDEX sessions_open_by_chat ON sessions(chat_key) WHERE closed = 0;
CREATE INDEX sessions_by_state ON sessions(state) WHERE closed = 0;

CREATE TABLE messages (
    session_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    body        TEXT NOT NULL,              -- agent_core.schema.Message as compact JSON
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE questions (
    session_id        TEXT NOT NULL,
    tool_call_id      TEXT NOT NULL,
    question          TEXT NOT NULL,
    options           TEXT NOT NULL DEFAULT '[]',
    asker_id          TEXT NOT NULL DEFAULT '',
    asked_at          REAL NOT NULL,
    deadline          REAL NOT NULL,
    posted_message_id TEXT,                 -- set once posted: a retry never posts twice
    status            TEXT NOT NULL,        -- waiting | answered | expired | cancelled
    PRIMARY KEY (session_id, tool_call_id)
) WITHOUT ROWID;
CREATE INDEX questions_waiting ON questions(deadline) WHERE status = 'waiting';

CREATE TABLE inbox (
    id          INTEGER PRIMARY KEY,
    platform    TEXT NOT NULL,
    dedup_id    TEXT NOT NULL,              -- the platform's own id; '' when it has none
    chat_key    TEXT NOT NULL,
    body        TEXT NOT NULL,              -- the IncomingMessage as JSON
    status      TEXT NOT NULL,              -- pending | done
    received_at REAL NOT NULL
);
CREATE UNIQUE INDEX inbox_dedup ON inbox(platform, dedup_id) WHERE dedup_id <> '';
CREATE INDEX inbox_pending ON inbox(chat_key, id) WHERE status = 'pending';

CREATE TABLE outbox (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    chat_key    TEXT NOT NULL,
    kind        TEXT NOT NULL,              -- answer | notice
    body        TEXT NOT NULL,
    status      TEXT NOT NULL,              -- pending | sent
    created_at  REAL NOT NULL
);
CREATE INDEX outbox_pending ON outbox(id) WHERE status = 'pending';
