-- A question's watermark is recorded before its first posting attempt and kept across re-posts
-- (an attempt that failed clears it): a process killed between the platform taking the question
-- and recording the posting re-posts it after the restart (or a takeover), and the answer the
-- person gave in between must still be above the watermark. Before, the delivery worker read
-- the watermark before each attempt and recorded it only with the posting. The twin of
-- migrations/0012_question_first_post.sql.
ALTER TABLE questions ADD COLUMN first_post_after BIGINT;  -- the last inbox id before the first attempt

-- Before a question's first posting attempt: its watermark, the newest inbox id now, recorded
-- once; a re-post gets the first one back. Committed before the platform is called, so an answer
-- stored by any process once the person could see the question lands above it. The question's
-- id, or null when the outbox row posts no question.
CREATE FUNCTION bot_record_watermark(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_mark BIGINT;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE questions q
       SET first_post_after = COALESCE(q.first_post_after, (SELECT COALESCE(MAX(id), 0) FROM inbox))
      FROM outbox o
     WHERE o.id = (w->>'outbox_id')::bigint AND o.kind = 'question'
       AND q.session_id = o.session_id AND q.tool_call_id = o.tool_call_id
    RETURNING q.first_post_after INTO v_mark;
    RETURN to_jsonb(v_mark);
END $$;

-- A question's attempt that failed did not reach the chat: the next attempt records its own
-- watermark (only one cut short by a kill, its outcome unknown, keeps it).
CREATE OR REPLACE FUNCTION bot_outbox_attempt_failed(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE outbox SET attempts = attempts + 1, error = w->>'error' WHERE id = (w->>'outbox_id')::bigint;
    UPDATE questions q SET first_post_after = NULL
      FROM outbox o
     WHERE o.id = (w->>'outbox_id')::bigint AND o.kind = 'question'
       AND q.session_id = o.session_id AND q.tool_call_id = o.tool_call_id AND q.posted_after IS NULL;
    RETURN NULL;
END $$;

-- A posted question records its message and its watermark: the one recorded before the first
-- attempt (bot_record_watermark), else `posted_after` from the caller, else the newest inbox id now.
CREATE OR REPLACE FUNCTION bot_outbox_sent(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_session TEXT;
    v_call_id TEXT;
    v_message_id TEXT;
    v_kind TEXT;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE outbox SET status = 'sent', parts_sent = (w->>'parts_sent')::int,
           message_id = COALESCE(w->>'message_id', message_id)
     WHERE id = (w->>'outbox_id')::bigint RETURNING session_id, tool_call_id, message_id, kind
      INTO v_session, v_call_id, v_message_id, v_kind;
    IF v_kind = 'question' THEN  -- posted: from now on a message can answer it
        UPDATE questions SET posted_message_id = v_message_id,
               posted_after = COALESCE(first_post_after, (w->>'posted_after')::bigint,
                                       (SELECT COALESCE(MAX(id), 0) FROM inbox))
         WHERE session_id = v_session AND tool_call_id = v_call_id;
    END IF;
    RETURN NULL;
END $$;
