-- Chat ownership by lease with fencing (bot/store/postgres/leases.py). PostgreSQL only: with SQLite
-- one process serves every chat.
--
-- A lease row is never deleted by the store, and its fence comes from one sequence for all
-- chats, taken while the row is locked: every new lease of a chat carries a larger number than
-- any lease of that chat before it, even if rows were ever cleaned up by hand.

CREATE SEQUENCE chat_lease_fence;

CREATE TABLE chat_leases (
    chat_key    TEXT PRIMARY KEY,
    owner       TEXT,                            -- the holding process; NULL once released
    fence       BIGINT NOT NULL,                 -- the fencing number of the current lease
    expires_at  TIMESTAMPTZ NOT NULL,            -- from the database's now(), never a process clock
    acquired_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX chat_leases_expiry ON chat_leases(expires_at) WHERE owner IS NOT NULL;
