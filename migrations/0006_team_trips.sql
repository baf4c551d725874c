-- Team trips: a question can be addressed to one traveller (several wait at once in a chat, one
-- per person). `addressee` is the traveller as the request names them ("@bo", "ana", a Slack
-- user id); asker_id is then the platform id of the one person who may answer ("" when only the
-- handle is known: Telegram @usernames are matched by handle).
ALTER TABLE questions ADD COLUMN addressee TEXT NOT NULL DEFAULT '';

-- A finished team plan waits for an approver's sign-off: the decision, who made it and when are
-- kept (shown in the thread and by /status); its reminder and deadline survive restarts.
CREATE TABLE signoffs (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL,
    chat_key     TEXT NOT NULL,
    status       TEXT NOT NULL,            -- waiting | rejecting | approved | rejected | expired | cancelled | superseded
    approvers    TEXT NOT NULL DEFAULT '[]', -- JSON: platform ids or @handles
    requested_at REAL NOT NULL,
    remind_at    REAL NOT NULL,
    deadline     REAL NOT NULL,
    reminded     INTEGER NOT NULL DEFAULT 0,
    decided_by   TEXT,                     -- who approved or rejected (or pressed Reject, while rejecting)
    decided_at   REAL,
    reason       TEXT                      -- why it was rejected
);
CREATE INDEX signoffs_by_session ON signoffs(session_id, requested_at);
CREATE INDEX signoffs_open ON signoffs(deadline) WHERE status IN ('waiting', 'rejecting');

-- `/trip approver @who` in a Slack channel: approvers of that channel, besides BOT_APPROVERS
CREATE TABLE channel_approvers (
    platform   TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    added_by   TEXT NOT NULL,
    added_at   REAL NOT NULL,
    PRIMARY KEY (platform, channel_id, user_id)
);
