-- When the current run started: a resumed run keeps the "today" it began with, so
-- "next Friday" means the same day after an overnight pause or a restart.
ALTER TABLE sessions ADD COLUMN run_started_at REAL NOT NULL DEFAULT 0;
