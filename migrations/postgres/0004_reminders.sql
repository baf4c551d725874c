-- The PostgreSQL twin of migrations/0005_reminders.sql: when a question's one reminder is due;
-- NULL once it was sent (or when none is wanted).
ALTER TABLE questions ADD COLUMN remind_at DOUBLE PRECISION;
CREATE INDEX questions_reminders ON questions(remind_at) WHERE status = 'waiting' AND remind_at IS NOT NULL;
