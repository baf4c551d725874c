-- One reminder per question: when it is due. NULL once it was sent (or when none is wanted), so
-- a reminder is queued once, in the same transaction that clears this.
ALTER TABLE questions ADD COLUMN remind_at REAL;
CREATE INDEX questions_reminders ON questions(remind_at) WHERE status = 'waiting' AND remind_at IS NOT NULL;
