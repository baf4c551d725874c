-- The PostgreSQL twin of migrations/0004_chat_actor.sql (one actor per chat): the inbox holds
-- the chat's events as well as its messages, a question records when it was posted (the inbox
-- watermark), and the outbox records its attempts, the parts already delivered and why a row
-- failed. Session states take the machine's names.
ALTER TABLE inbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'message'; -- message | expired | resume | undeliverable
ALTER TABLE inbox ADD COLUMN error TEXT;                            -- why a row was set aside (status 'failed')
ALTER TABLE questions ADD COLUMN posted_after BIGINT;               -- the last inbox id when it was posted
ALTER TABLE outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN parts_sent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN message_id TEXT;                      -- the platform id of the last part sent
ALTER TABLE outbox ADD COLUMN error TEXT;                           -- the last failure (why it failed, once failed)
ALTER TABLE outbox ADD COLUMN tool_call_id TEXT;                    -- question rows: the question they post

UPDATE sessions SET state = 'working' WHERE state = 'running';
UPDATE sessions SET state = 'asking' WHERE state = 'waiting';
UPDATE questions SET posted_after = (SELECT COALESCE(MAX(id), 0) FROM inbox)
 WHERE status = 'waiting' AND posted_message_id IS NOT NULL;
-- a question stored but never posted is posted by the delivery worker now. SQLite's json_object
-- and json() are json_build_object and a cast here (options is a JSON array kept as text); the
-- body is the same object as pause() writes (bot.store.postgres.writes.pause), up to whitespace.
INSERT INTO outbox (session_id, chat_key, kind, body, status, created_at, tool_call_id)
SELECT q.session_id, s.chat_key, 'question',
       json_build_object('tool_call_id', q.tool_call_id, 'question', q.question, 'options', q.options::json,
                         'lang', s.lang, 'user_id', s.asker_id, 'user_name', s.asker_name)::text,
       'pending', q.asked_at, q.tool_call_id
  FROM questions q JOIN sessions s ON s.id = q.session_id
 WHERE q.status = 'waiting' AND q.posted_message_id IS NULL
 ORDER BY q.asked_at;

CREATE INDEX outbox_pending_by_chat ON outbox(chat_key, id) WHERE status = 'pending';
CREATE INDEX outbox_failed_by_chat ON outbox(chat_key) WHERE status = 'failed';
