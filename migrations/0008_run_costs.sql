-- Cost per chat and per run, and the trace each run belongs to (issue 17). The twin of
-- migrations/postgres/0007_run_costs.sql.
--
-- sessions.cost_usd sums its runs' model calls at the price table in force when each was made;
-- sessions.trace_parent is the W3C traceparent of the current run's trace, written with the
-- turn that starts the run (no extra write): its resumed segments, after a pause or a restart,
-- join that trace. '' when tracing is off.
ALTER TABLE sessions ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';

-- One row per run (a request, through its pauses and restarts, to its answer): what its model
-- calls used, written with each segment's outcome.
CREATE TABLE runs (
    session_id        TEXT NOT NULL,
    run_no            INTEGER NOT NULL,
    chat_key          TEXT NOT NULL,
    model             TEXT NOT NULL DEFAULT '',
    segments          INTEGER NOT NULL DEFAULT 0, -- start, each resume after an answer or a restart
    steps             INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    llm_calls         INTEGER NOT NULL DEFAULT 0,
    cost_usd          REAL NOT NULL DEFAULT 0,
    outcome           TEXT NOT NULL DEFAULT '',   -- paused | answered | failed | crashed | stopped
    started_at        REAL NOT NULL,
    updated_at        REAL NOT NULL,
    PRIMARY KEY (session_id, run_no)
) WITHOUT ROWID;
CREATE INDEX runs_recent ON runs(updated_at);
