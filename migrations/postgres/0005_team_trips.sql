-- The PostgreSQL twin of migrations/0006_team_trips.sql: a question can be addressed to one
-- traveller, and several wait at once in a chat (one per person).
ALTER TABLE questions ADD COLUMN addressee TEXT NOT NULL DEFAULT '';
