-- Every write of the store as one server function taking one jsonb argument: its record.
--
-- bot.store.writes builds each write's record once, in Python, for both databases: SQLite's
-- writer runs the function of that name in bot/store/sqlite/ with it, and PostgreSQL runs
-- `SELECT bot_<name>($1::jsonb)` here. The functions of 0008 took 7 to 30 positional parameters
-- and rebuilt in SQL the JSON of a question's posting that Python already wrote; a new column
-- meant four changes. Now a row the write stores whole (a question, a sign-off) is filled from
-- its JSON by column name (jsonb_populate_record), so a new column is its migration and its
-- field in bot/store/rows.py; every JSON body comes from Python, byte for byte as SQLite stores it.
--
-- Each call is one statement, so one round trip, and runs in that statement's transaction: it
-- completes or leaves no trace, and the client hears of it once committed. A write that
-- changes a chat carries its writer's lease in the record (`fence`: chat_key, owner, fence;
-- null for an unfenced write) and checks it first, as bot.store.postgres.leases.begin_fenced
-- does: the lease row is locked FOR SHARE until the transaction ends, so a takeover waits for
-- the write to commit or finds it never happened. A lost lease raises SQLSTATE 'BL001' (the
-- store turns it into LeaseLost). A function returns jsonb (SQL NULL for nothing): asyncpg knows
-- that type without asking the catalog.
--
-- Each body keeps the order of statements of the function it replaces, and its SQLite twin's
-- effects: a write that changes the session row does that first (its UPDATE is the lock
-- bot_append needs). Statements inside a function take their own snapshots (READ COMMITTED).

DROP FUNCTION bot_start_turn;
DROP FUNCTION bot_append_step;
DROP FUNCTION bot_pause;
DROP FUNCTION bot_finish_run;
DROP FUNCTION bot_resolve_question;
DROP FUNCTION bot_add_usage;
DROP FUNCTION bot_outbox_sent;
DROP FUNCTION bot_usage;
DROP FUNCTION bot_append;
DROP FUNCTION bot_check_fence;

-- helpers --------------------------------------------------------------------------------------

CREATE FUNCTION bot_check_fence(w jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    f jsonb := w->'fence';
BEGIN
    IF f IS NULL OR jsonb_typeof(f) = 'null' THEN
        RETURN;  -- an unfenced write (no lease: one process, tests, tools)
    END IF;
    PERFORM 1 FROM chat_leases
     WHERE chat_key = f->>'chat_key' AND owner = f->>'owner' AND fence = (f->>'fence')::bigint FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the lease of % with fence % was lost', f->>'chat_key', f->>'fence' USING ERRCODE = 'BL001';
    END IF;
END $$;

-- The caller has locked the session row (its UPDATE of that row comes first): each message takes
-- the next sequence number of its session. `bodies`: a JSON array of the messages' stored text.
CREATE FUNCTION bot_append(p_session TEXT, bodies jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF jsonb_array_length(bodies) = 0 THEN
        RETURN;
    END IF;
    INSERT INTO messages (session_id, seq, body)
    SELECT p_session, base.n + u.ord, u.body FROM jsonb_array_elements_text(bodies) WITH ORDINALITY AS u(body, ord),
           (SELECT COALESCE(MAX(seq), 0) AS n FROM messages WHERE session_id = p_session) AS base;
END $$;

CREATE FUNCTION bot_close_inbox(ids jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF jsonb_array_length(ids) > 0 THEN  -- mostly none: no statement then
        UPDATE inbox SET status = 'done' WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text(ids)::bigint));
    END IF;
END $$;

CREATE FUNCTION bot_outbox_row(p_session TEXT, p_chat TEXT, p_kind TEXT, p_body TEXT, p_now DOUBLE PRECISION,
                               p_call_id TEXT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_id BIGINT;
BEGIN
    INSERT INTO outbox (session_id, chat_key, kind, body, status, created_at, tool_call_id)
    VALUES (p_session, p_chat, p_kind, p_body, 'pending', p_now, p_call_id) RETURNING id INTO v_id;
    RETURN v_id;
END $$;

-- `p_rows`: a JSON array of [kind, body]; the ids in that order.
CREATE FUNCTION bot_outbox_rows(p_session TEXT, p_chat TEXT, p_rows jsonb, p_now DOUBLE PRECISION) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_ids jsonb := '[]';
BEGIN
    FOR i IN 0 .. jsonb_array_length(p_rows) - 1 LOOP
        v_ids := v_ids || to_jsonb(bot_outbox_row(p_session, p_chat, p_rows->i->>0, p_rows->i->>1, p_now, NULL));
    END LOOP;
    RETURN v_ids;
END $$;

-- A segment's usage (bot.store.rows.RunUsage): added to its session's totals, then to its run's
-- row (created by the run's first segment).
CREATE FUNCTION bot_usage(u jsonb, p_now DOUBLE PRECISION) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    WITH s AS (UPDATE sessions SET prompt_tokens = prompt_tokens + (u->>'prompt_tokens')::bigint,
                      completion_tokens = completion_tokens + (u->>'completion_tokens')::bigint,
                      llm_calls = llm_calls + (u->>'llm_calls')::bigint, cost_usd = cost_usd + (u->>'cost_usd')::float8
                WHERE id = u->>'session_id' RETURNING chat_key)
    INSERT INTO runs AS r (session_id, run_no, chat_key, model, segments, steps, prompt_tokens, completion_tokens,
                           llm_calls, cost_usd, outcome, started_at, updated_at)
    SELECT u->>'session_id', (u->>'run_no')::int, s.chat_key, u->>'model', 1, (u->>'steps')::int,
           (u->>'prompt_tokens')::bigint, (u->>'completion_tokens')::bigint, (u->>'llm_calls')::bigint,
           (u->>'cost_usd')::float8, u->>'outcome', p_now, p_now FROM s
    ON CONFLICT (session_id, run_no) DO UPDATE SET model = EXCLUDED.model, segments = r.segments + 1,
        steps = EXCLUDED.steps, prompt_tokens = r.prompt_tokens + EXCLUDED.prompt_tokens,
        completion_tokens = r.completion_tokens + EXCLUDED.completion_tokens,
        llm_calls = r.llm_calls + EXCLUDED.llm_calls, cost_usd = r.cost_usd + EXCLUDED.cost_usd,
        outcome = EXCLUDED.outcome, updated_at = EXCLUDED.updated_at;
END $$;

-- Events (bot.store.rows.ChatEvent) stored for their chats; each chat that got a new row wakes
-- its owner wherever it runs (the NOTIFY is sent at commit, on bot.store.postgres.notify's
-- INBOX_CHANNEL). Never fenced: whichever process noticed the event stores it.
CREATE FUNCTION bot_store_events(events jsonb, p_now DOUBLE PRECISION) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_chats TEXT[];
    v_chat TEXT;
BEGIN
    WITH stored AS (
        INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at, kind)
        SELECT 'internal', e.ev->>'dedup_id', e.ev->>'chat_key', e.ev->>'body', 'pending', p_now, e.ev->>'kind'
          FROM jsonb_array_elements(events) WITH ORDINALITY AS e(ev, ord)
         ORDER BY e.ord
        ON CONFLICT DO NOTHING RETURNING chat_key)
    SELECT array_agg(DISTINCT chat_key ORDER BY chat_key) INTO v_chats FROM stored;
    FOREACH v_chat IN ARRAY COALESCE(v_chats, '{}') LOOP
        PERFORM pg_notify('bot_inbox', v_chat);
    END LOOP;
END $$;

-- the inbox ------------------------------------------------------------------------------------

-- One statement: a stored row wakes the chat's owner, in whichever process; a duplicate, none.
-- `notify` false when the storing process runs the chat itself: a NOTIFY is not free, since
-- PostgreSQL lets one notifying transaction at a time commit (a lock held through the commit's
-- flush, across all databases), and under load the others queue behind it.
CREATE FUNCTION bot_add_inbox(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_id BIGINT;
BEGIN
    INSERT INTO inbox (platform, dedup_id, chat_key, body, status, received_at)
    VALUES (w->>'platform', w->>'dedup_id', w->>'chat_key', w->>'body', 'pending', (w->>'received_at')::float8)
    ON CONFLICT DO NOTHING RETURNING id INTO v_id;
    IF v_id IS NOT NULL AND (w->>'notify')::boolean THEN
        PERFORM pg_notify('bot_inbox', w->>'chat_key');
    END IF;
    RETURN to_jsonb(v_id);
END $$;

CREATE FUNCTION bot_add_events(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_store_events(w->'events', (w->>'now')::float8);
    RETURN NULL;
END $$;

CREATE FUNCTION bot_finish_inbox(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_id BIGINT := (w->>'inbox_id')::bigint;
BEGIN
    PERFORM bot_check_fence(w);
    IF (w->>'drop_earlier')::boolean THEN  -- /cancel and /new also discard the messages sent before them
        UPDATE inbox SET status = 'done' WHERE status = 'pending' AND kind = 'message' AND id < v_id
           AND chat_key = (SELECT chat_key FROM inbox WHERE id = v_id);
    END IF;
    UPDATE inbox SET status = 'done' WHERE id = v_id;
    RETURN NULL;
END $$;

CREATE FUNCTION bot_fail_inbox(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE inbox SET status = 'failed', error = w->>'error' WHERE id = (w->>'inbox_id')::bigint;
    RETURN NULL;
END $$;

CREATE FUNCTION bot_notice_inbox(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE inbox SET noticed = 1 WHERE id = (w->>'inbox_id')::bigint;
    RETURN to_jsonb(bot_outbox_row(w->>'session_id', w->>'chat_key', 'notice', w->>'body', (w->>'now')::float8, NULL));
END $$;

-- sessions and runs ----------------------------------------------------------------------------

CREATE FUNCTION bot_remember_location(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_now DOUBLE PRECISION := (w->>'now')::float8;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE sessions SET location = w->>'location', updated_at = v_now WHERE chat_key = w->>'chat_key' AND closed = 0;
    IF NOT FOUND THEN
        INSERT INTO sessions (id, chat_key, state, lang, location, created_at, updated_at)
        VALUES (w->>'new_session_id', w->>'chat_key', 'idle', w->>'lang', w->>'location', v_now, v_now);
    END IF;
    RETURN NULL;
END $$;

-- `turn`: bot.store.rows.TurnStart (its message as the stored text); the session as it leaves it.
CREATE FUNCTION bot_start_turn(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    t jsonb := w->'turn';
    v_now DOUBLE PRECISION := (w->>'now')::float8;
    s sessions;
BEGIN
    PERFORM bot_check_fence(w);
    -- the row is written first and returned: its write is the lock bot_append needs
    UPDATE sessions SET state = 'working', lang = t->>'lang', asker_id = t->>'asker_id', asker_name = t->>'asker_name',
           run_no = run_no + 1, run_steps = 0, request = t->>'request', location = COALESCE(t->>'location', location),
           updated_at = v_now, run_started_at = v_now, trace_parent = t->>'trace_parent'
     WHERE chat_key = t->>'chat_key' AND closed = 0 RETURNING * INTO s;
    IF NOT FOUND THEN
        INSERT INTO sessions (id, chat_key, state, lang, asker_id, asker_name, run_no, run_steps, request,
                              location, created_at, updated_at, run_started_at, trace_parent)
        VALUES (t->>'new_session_id', t->>'chat_key', 'working', t->>'lang', t->>'asker_id', t->>'asker_name', 1, 0,
                t->>'request', t->>'location', v_now, v_now, v_now, t->>'trace_parent')
        RETURNING * INTO s;
    END IF;
    PERFORM bot_append(s.id, jsonb_build_array(t->'message'));
    UPDATE inbox SET status = 'done' WHERE id = (t->>'inbox_id')::bigint;
    -- a new turn supersedes a plan still waiting for sign-off (or records why it was rejected)
    UPDATE signoffs SET status = CASE WHEN t->>'rejected_by' <> '' THEN 'rejected' ELSE 'superseded' END,
           decided_by = COALESCE(NULLIF(t->>'rejected_by', ''), decided_by), decided_at = v_now,
           reason = NULLIF(t->>'reason', '')
     WHERE session_id = s.id AND status IN ('waiting', 'rejecting');
    RETURN to_jsonb(s);
END $$;

CREATE FUNCTION bot_append_step(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE sessions SET run_steps = (w->>'step')::int WHERE id = w->>'session_id';
    PERFORM bot_append(w->>'session_id', w->'messages');
    PERFORM bot_close_inbox(w->'inbox_done');
    RETURN NULL;
END $$;

-- `questions`: bot.store.rows.QuestionRow each, stored whole (a question asked again under the
-- same id replaces the old one, as SQLite's INSERT OR REPLACE does); `postings`: the outbox body
-- of each, in order. The outbox ids come back in that order.
CREATE FUNCTION bot_pause(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_session TEXT := w->>'session_id';
    v_now DOUBLE PRECISION := (w->>'now')::float8;
    v_chat TEXT;
    v_ids jsonb := '[]';
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE sessions SET state = 'asking', run_steps = (w->>'step')::int, updated_at = v_now WHERE id = v_session
        RETURNING chat_key INTO v_chat;
    PERFORM bot_append(v_session, w->'messages');
    DELETE FROM questions q USING jsonb_populate_recordset(NULL::questions, w->'questions') AS n
     WHERE q.session_id = n.session_id AND q.tool_call_id = n.tool_call_id;
    INSERT INTO questions SELECT * FROM jsonb_populate_recordset(NULL::questions, w->'questions');
    PERFORM bot_close_inbox(w->'inbox_done');
    IF jsonb_typeof(w->'usage') = 'object' THEN  -- the segment's cost, in the same commit
        PERFORM bot_usage(w->'usage', v_now);
    END IF;
    FOR i IN 0 .. jsonb_array_length(w->'questions') - 1 LOOP
        v_ids := v_ids || to_jsonb(bot_outbox_row(v_session, v_chat, 'question', w->'postings'->>i, v_now,
                                                  w->'questions'->i->>'tool_call_id'));
    END LOOP;
    RETURN v_ids;
END $$;

-- `signoff`: bot.store.rows.SignoffRow stored whole, or null when the run asks for none;
-- `outbox`: [kind, body] each. The outbox ids come back in order.
CREATE FUNCTION bot_finish_run(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_session TEXT := w->>'session_id';
    v_now DOUBLE PRECISION := (w->>'now')::float8;
    v_signoff BOOLEAN := jsonb_typeof(w->'signoff') = 'object';
    v_chat TEXT;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE sessions SET state = CASE WHEN v_signoff THEN 'signoff' ELSE 'idle' END, updated_at = v_now
     WHERE id = v_session RETURNING chat_key INTO v_chat;
    PERFORM bot_append(v_session, w->'messages');
    IF v_signoff THEN
        INSERT INTO signoffs SELECT * FROM jsonb_populate_record(NULL::signoffs, w->'signoff');
    END IF;
    PERFORM bot_close_inbox(w->'inbox_done');
    IF jsonb_typeof(w->'usage') = 'object' THEN  -- the segment's cost, in the same commit
        PERFORM bot_usage(w->'usage', v_now);
    END IF;
    RETURN bot_outbox_rows(v_session, v_chat, w->'outbox', v_now);
END $$;

CREATE FUNCTION bot_interrupt(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_session TEXT := w->>'session_id';
    v_now DOUBLE PRECISION := (w->>'now')::float8;
    v_chat TEXT;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE sessions SET state = 'idle', closed = CASE WHEN (w->>'close')::boolean THEN 1 ELSE 0 END, updated_at = v_now
     WHERE id = v_session RETURNING chat_key INTO v_chat;
    PERFORM bot_append(v_session, w->'messages');
    UPDATE questions SET status = 'cancelled' WHERE session_id = v_session AND status = 'waiting';
    UPDATE signoffs SET status = 'cancelled' WHERE session_id = v_session AND status IN ('waiting', 'rejecting');
    IF jsonb_typeof(w->'notice') = 'string' THEN
        PERFORM bot_outbox_row(v_session, v_chat, 'notice', w->>'notice', v_now, NULL);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION bot_close_session(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE sessions SET closed = 1, state = 'idle' WHERE chat_key = w->>'chat_key' AND closed = 0;
    RETURN NULL;
END $$;

CREATE FUNCTION bot_add_usage(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    PERFORM bot_usage(w->'usage', (w->>'now')::float8);
    RETURN NULL;
END $$;

-- questions ------------------------------------------------------------------------------------

CREATE FUNCTION bot_resolve_question(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_session TEXT := w->>'session_id';
    v_now DOUBLE PRECISION := (w->>'now')::float8;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE questions SET status = w->>'status'
     WHERE session_id = v_session AND tool_call_id = w->>'tool_call_id' AND status = 'waiting';
    IF NOT FOUND THEN
        RETURN to_jsonb(false);
    END IF;
    -- the run resumes once every question of its turn is answered or expired; the row is
    -- updated either way (the same values while a question still waits): bot_append's lock
    UPDATE sessions SET state = CASE WHEN q.waiting THEN state ELSE 'working' END,
           updated_at = CASE WHEN q.waiting THEN updated_at ELSE v_now END
      FROM (SELECT EXISTS (SELECT 1 FROM questions WHERE session_id = v_session AND status = 'waiting') AS waiting) AS q
     WHERE id = v_session;
    PERFORM bot_append(v_session, jsonb_build_array(w->'message'));
    IF jsonb_typeof(w->'inbox_id') = 'number' THEN
        UPDATE inbox SET status = 'done' WHERE id = (w->>'inbox_id')::bigint;
    END IF;
    RETURN to_jsonb(true);
END $$;

CREATE FUNCTION bot_remind(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_session TEXT := w->>'session_id';
    v_found BOOLEAN;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE questions SET remind_at = NULL
     WHERE session_id = v_session AND tool_call_id = w->>'tool_call_id' AND status = 'waiting' AND remind_at IS NOT NULL;
    v_found := FOUND;
    UPDATE inbox SET status = 'done' WHERE id = (w->>'inbox_id')::bigint;
    IF NOT v_found THEN
        RETURN NULL;
    END IF;
    RETURN to_jsonb(bot_outbox_row(v_session, (SELECT chat_key FROM sessions WHERE id = v_session), 'reminder',
                                   w->>'body', (w->>'now')::float8, w->>'tool_call_id'));
END $$;

-- sign-offs ------------------------------------------------------------------------------------

CREATE FUNCTION bot_decide_signoff(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_now DOUBLE PRECISION := (w->>'now')::float8;
    v_session TEXT;
    v_chat TEXT;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE signoffs SET status = w->>'status', decided_by = w->>'by', decided_at = v_now,
           reason = COALESCE(w->>'reason', reason)
     WHERE id = w->>'signoff_id' AND status IN ('waiting', 'rejecting') RETURNING session_id, chat_key
      INTO v_session, v_chat;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF w->>'status' IN ('approved', 'expired') THEN
        UPDATE sessions SET state = 'idle', updated_at = v_now WHERE id = v_session AND state = 'signoff';
    END IF;
    IF jsonb_typeof(w->'inbox_id') = 'number' THEN
        UPDATE inbox SET status = 'done' WHERE id = (w->>'inbox_id')::bigint;
    END IF;
    RETURN bot_outbox_rows(v_session, v_chat, w->'outbox', v_now);
END $$;

CREATE FUNCTION bot_signoff_reminded(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_session TEXT;
    v_chat TEXT;
    v_found BOOLEAN;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE signoffs SET reminded = 1
     WHERE id = w->>'signoff_id' AND reminded = 0 AND status IN ('waiting', 'rejecting')
    RETURNING session_id, chat_key INTO v_session, v_chat;
    v_found := FOUND;
    IF jsonb_typeof(w->'inbox_id') = 'number' THEN
        UPDATE inbox SET status = 'done' WHERE id = (w->>'inbox_id')::bigint;
    END IF;
    IF NOT v_found THEN
        RETURN NULL;
    END IF;
    RETURN bot_outbox_rows(v_session, v_chat, w->'outbox', (w->>'now')::float8);
END $$;

CREATE FUNCTION bot_add_approver(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    INSERT INTO channel_approvers (platform, channel_id, user_id, added_by, added_at)
    VALUES (w->>'platform', w->>'channel_id', w->>'user_id', w->>'added_by', (w->>'now')::float8)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

-- suggestions (bot.chat.suggestions) and the ratings of plans -----------------------------------

-- `suggestion`: bot.store.rows.SuggestionRow, stored whole; `outbox`: [kind, body] each.
CREATE FUNCTION bot_add_suggestion(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    s suggestions := jsonb_populate_record(NULL::suggestions, w->'suggestion');
BEGIN
    PERFORM bot_check_fence(w);
    INSERT INTO suggestions SELECT (s).*;
    UPDATE inbox SET status = 'done' WHERE id = (w->>'inbox_id')::bigint;
    RETURN bot_outbox_rows(s.session_id, s.chat_key, w->'outbox', (w->>'now')::float8);
END $$;

-- `adopted`: a Yes's suggestion as the requester's message (bot.store.rows.ChatEvent), or null.
CREATE FUNCTION bot_decide_suggestion(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_now DOUBLE PRECISION := (w->>'now')::float8;
    v_session TEXT;
    v_chat TEXT;
    v_found BOOLEAN;
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE suggestions SET status = w->>'status', decided_by = w->>'by', decided_at = v_now
     WHERE id = w->>'suggestion_id' AND status = 'waiting' RETURNING session_id, chat_key INTO v_session, v_chat;
    v_found := FOUND;
    IF jsonb_typeof(w->'inbox_id') = 'number' THEN
        UPDATE inbox SET status = 'done' WHERE id = (w->>'inbox_id')::bigint;
    END IF;
    IF NOT v_found THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(w->'adopted') = 'object' THEN
        PERFORM bot_store_events(jsonb_build_array(w->'adopted'), v_now);
    END IF;
    RETURN bot_outbox_rows(v_session, v_chat, w->'outbox', v_now);
END $$;

-- Only a run of this chat on record takes a rating; a person's later press replaces theirs.
CREATE FUNCTION bot_record_feedback(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    INSERT INTO run_feedback (session_id, run_no, user_id, rating, at)
    SELECT session_id, run_no, w->>'user_id', w->>'rating', (w->>'at')::float8 FROM runs
     WHERE session_id = w->>'session_id' AND run_no = (w->>'run_no')::int AND chat_key = w->>'chat_key'
    ON CONFLICT (session_id, run_no, user_id) DO UPDATE SET rating = EXCLUDED.rating, at = EXCLUDED.at;
    RETURN to_jsonb(FOUND);
END $$;

-- the outbox -----------------------------------------------------------------------------------

CREATE FUNCTION bot_queue_outbox(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    RETURN to_jsonb(bot_outbox_row(w->>'session_id', w->>'chat_key', w->>'kind', w->>'body', (w->>'now')::float8,
                                   NULL));
END $$;

CREATE FUNCTION bot_outbox_part_sent(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE outbox SET parts_sent = (w->>'parts_sent')::int, message_id = w->>'message_id'
     WHERE id = (w->>'outbox_id')::bigint;
    RETURN NULL;
END $$;

-- A posted question records its message and the inbox watermark (`posted_after`, read before the
-- platform was called: bot.store.base.Store.question_watermark; else the newest inbox id now).
CREATE FUNCTION bot_outbox_sent(w jsonb) RETURNS jsonb
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
               posted_after = COALESCE((w->>'posted_after')::bigint, (SELECT COALESCE(MAX(id), 0) FROM inbox))
         WHERE session_id = v_session AND tool_call_id = v_call_id;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION bot_outbox_attempt_failed(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE outbox SET attempts = attempts + 1, error = w->>'error' WHERE id = (w->>'outbox_id')::bigint;
    RETURN NULL;
END $$;

-- `event`: the chat's `undeliverable` event when the row posts a question (told once: its
-- dedup id), else null.
CREATE FUNCTION bot_outbox_failed(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(w);
    UPDATE outbox SET status = 'failed', attempts = attempts + 1, error = w->>'error'
     WHERE id = (w->>'outbox_id')::bigint;
    IF jsonb_typeof(w->'event') = 'object' THEN
        PERFORM bot_store_events(jsonb_build_array(w->'event'), (w->>'now')::float8);
    END IF;
    RETURN NULL;
END $$;

-- The operator's retry of a failed answer or notice: any process may queue it (never fenced).
CREATE FUNCTION bot_retry_outbox(w jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_chat TEXT;
BEGIN
    UPDATE outbox SET status = 'pending', attempts = 0
     WHERE id = (w->>'outbox_id')::bigint AND status = 'failed' AND kind <> 'question' RETURNING chat_key INTO v_chat;
    RETURN to_jsonb(v_chat);
END $$;
