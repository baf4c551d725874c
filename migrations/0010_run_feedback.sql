-- 👍 / 👎 under a plan (issue 34): one row per person per run, their latest press, stored with
-- the run it rates. The twin of migrations/postgres/0013_run_feedback.sql.
CREATE TABLE run_feedback (
    session_id TEXT NOT NULL,
    run_no     INTEGER NOT NULL,
    user_id    TEXT NOT NULL,            -- the platform's id of the person who pressed
    rating     TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    at         REAL NOT NULL,            -- epoch seconds of the (latest) press
    PRIMARY KEY (session_id, run_no, user_id),
    FOREIGN KEY (session_id, run_no) REFERENCES runs (session_id, run_no)
) WITHOUT ROWID;
CREATE INDEX run_feedback_recent ON run_feedback(at);
