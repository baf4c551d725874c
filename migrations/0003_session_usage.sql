-- Token usage is counted per session (never shared between sessions), and kept across restarts.
ALTER TABLE sessions ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN llm_calls INTEGER NOT NULL DEFAULT 0;
