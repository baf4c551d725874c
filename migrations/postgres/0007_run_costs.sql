-- The PostgreSQL twin of migrations/0008_run_costs.sql: cost per chat and per run, and the
-- trace each run belongs to (issue 17).
ALTER TABLE sessions ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';

CREATE TABLE runs (
    session_id        TEXT NOT NULL,
    run_no            INTEGER NOT NULL,
    chat_key          TEXT NOT NULL,
    model             TEXT NOT NULL DEFAULT '',
    segments          INTEGER NOT NULL DEFAULT 0,
    steps             INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    llm_calls         BIGINT NOT NULL DEFAULT 0,
    cost_usd          DOUBLE PRECISION NOT NULL DEFAULT 0,
    outcome           TEXT NOT NULL DEFAULT '',
    started_at        DOUBLE PRECISION NOT NULL,
    updated_at        DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, run_no)
);
CREATE INDEX runs_recent ON runs(updated_at);
