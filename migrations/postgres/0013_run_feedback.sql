-- 👍 / 👎 under a plan (issue 34): one row per person per run, their latest press, stored with
-- the run it rates. The twin of migrations/0010_run_feedback.sql.
CREATE TABLE run_feedback (
    session_id TEXT NOT NULL,
    run_no     INTEGER NOT NULL,
    user_id    TEXT NOT NULL,
    rating     TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    at         DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, run_no, user_id),
    FOREIGN KEY (session_id, run_no) REFERENCES runs (session_id, run_no)
);
CREATE INDEX run_feedback_recent ON run_feedback (at);
