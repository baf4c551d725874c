-- The hot writes of a chat's step as server functions (bot/store/postgres/calls.py): each is one
-- statement, so one round trip, where BEGIN and the fence check, the write's statements and
-- COMMIT took four to seven (issue 18: every statement is a round trip, and a step is mostly
-- round trips). A function runs in the transaction of the statement that calls it, so it
-- either completes or leaves no trace, and the client hears of it only after its COMMIT.
--
-- Each function takes the writer's lease first (f_chat, f_owner, f_fence; all NULL for an
-- unfenced write) and checks it before anything else, exactly as pg_leases.begin_fenced does:
-- the lease row is locked FOR SHARE until the transaction ends, so a takeover waits for the
-- write to commit or finds it never happened. A lost lease raises SQLSTATE 'BL001' (the store
-- turns it into LeaseLost, describing the lease row as it is then).
--
-- Each body is the twin of its writes.py function (SQLite) statement by statement, and keeps
-- the order of the Python version it replaces (bot.store.postgres.writes before this migration).
-- Statements inside a function take their own snapshots (READ COMMITTED, VOLATILE), as the
-- separate statements of the client-side transaction did.

CREATE FUNCTION bot_check_fence(f_chat TEXT, f_owner TEXT, f_fence BIGINT) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF f_owner IS NULL THEN
        RETURN;  -- an unfenced write (no lease: tests, tools)
    END IF;
    PERFORM 1 FROM chat_leases WHERE chat_key = f_chat AND owner = f_owner AND fence = f_fence FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the lease of % with fence % was lost', f_chat, f_fence USING ERRCODE = 'BL001';
    END IF;
END $$;

-- The caller has locked the session row (its UPDATE of that row comes first): each message takes
-- the next sequence number of its session.
CREATE FUNCTION bot_append(p_session TEXT, p_bodies TEXT[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO messages (session_id, seq, body)
    SELECT p_session, base.n + u.ord, u.body FROM unnest(p_bodies) WITH ORDINALITY AS u(body, ord),
           (SELECT COALESCE(MAX(seq), 0) AS n FROM messages WHERE session_id = p_session) AS base
$$;

CREATE FUNCTION bot_start_turn(
    f_chat TEXT, f_owner TEXT, f_fence BIGINT, p_chat_key TEXT, p_new_id TEXT, p_lang TEXT, p_asker_id TEXT,
    p_asker_name TEXT, p_request TEXT, p_location TEXT, p_trace_parent TEXT, p_body TEXT, p_inbox_id BIGINT,
    p_rejected_by TEXT, p_reason TEXT, p_now DOUBLE PRECISION
) RETURNS sessions
LANGUAGE plpgsql AS $$
DECLARE
    s sessions;
BEGIN
    PERFORM bot_check_fence(f_chat, f_owner, f_fence);
    -- the row is written first and returned: its write is the lock bot_append needs
    UPDATE sessions SET state = 'working', lang = p_lang, asker_id = p_asker_id, asker_name = p_asker_name,
           run_no = run_no + 1, run_steps = 0, request = p_request, location = COALESCE(p_location, location),
           updated_at = p_now, run_started_at = p_now, trace_parent = p_trace_parent
     WHERE chat_key = p_chat_key AND closed = 0 RETURNING * INTO s;
    IF NOT FOUND THEN
        INSERT INTO sessions (id, chat_key, state, lang, asker_id, asker_name, run_no, run_steps, request,
                              location, created_at, updated_at, run_started_at, trace_parent)
        VALUES (p_new_id, p_chat_key, 'working', p_lang, p_asker_id, p_asker_name, 1, 0, p_request, p_location,
                p_now, p_now, p_now, p_trace_parent)
        RETURNING * INTO s;
    END IF;
    PERFORM bot_append(s.id, ARRAY[p_body]);
    UPDATE inbox SET status = 'done' WHERE id = p_inbox_id;
    -- a new turn supersedes a plan still waiting for sign-off (or records why it was rejected)
    UPDATE signoffs SET status = CASE WHEN p_rejected_by <> '' THEN 'rejected' ELSE 'superseded' END,
           decided_by = COALESCE(NULLIF(p_rejected_by, ''), decided_by), decided_at = p_now,
           reason = NULLIF(p_reason, '')
     WHERE session_id = s.id AND status IN ('waiting', 'rejecting');
    RETURN s;
END $$;

CREATE FUNCTION bot_append_step(
    f_chat TEXT, f_owner TEXT, f_fence BIGINT, p_session TEXT, p_bodies TEXT[], p_step INTEGER,
    p_inbox_done BIGINT[]
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(f_chat, f_owner, f_fence);
    UPDATE sessions SET run_steps = p_step WHERE id = p_session;
    PERFORM bot_append(p_session, p_bodies);
    IF cardinality(p_inbox_done) > 0 THEN  -- mostly none: no statement then
        UPDATE inbox SET status = 'done' WHERE id = ANY(p_inbox_done);
    END IF;
END $$;

-- The questions come as one array per column, in the order of the outbox ids returned; u_*: the
-- segment's usage (bot_usage), all NULL when there is none to store. A
-- question's outbox body is the text writes.question_json makes (json.dumps, ensure_ascii off):
-- to_json escapes a string as it does, and the options come as the JSON text it wrote.
CREATE FUNCTION bot_pause(
    f_chat TEXT, f_owner TEXT, f_fence BIGINT, p_session TEXT, p_bodies TEXT[], p_step INTEGER,
    p_inbox_done BIGINT[], q_call_ids TEXT[], q_texts TEXT[], q_options TEXT[], q_asker_ids TEXT[],
    q_asked_at DOUBLE PRECISION[], q_deadlines DOUBLE PRECISION[], q_remind_at DOUBLE PRECISION[],
    q_addressees TEXT[], u_session TEXT, u_run_no INTEGER, u_model TEXT, u_steps INTEGER, u_prompt BIGINT,
    u_completion BIGINT, u_calls BIGINT, u_cost DOUBLE PRECISION, u_outcome TEXT, p_now DOUBLE PRECISION
) RETURNS BIGINT[]
LANGUAGE plpgsql AS $$
DECLARE
    v_chat TEXT;
    v_lang TEXT;
    v_asker_name TEXT;
    v_id BIGINT;
    v_ids BIGINT[] := '{}';
    n INTEGER := COALESCE(array_length(q_call_ids, 1), 0);
BEGIN
    PERFORM bot_check_fence(f_chat, f_owner, f_fence);
    UPDATE sessions SET state = 'asking', run_steps = p_step, updated_at = p_now WHERE id = p_session
        RETURNING chat_key, lang, asker_name INTO v_chat, v_lang, v_asker_name;
    PERFORM bot_append(p_session, p_bodies);
    FOR i IN 1..n LOOP
        INSERT INTO questions (session_id, tool_call_id, question, options, asker_id, asked_at, deadline,
                               posted_message_id, status, posted_after, remind_at, addressee)
        VALUES (p_session, q_call_ids[i], q_texts[i], q_options[i], q_asker_ids[i], q_asked_at[i], q_deadlines[i],
                NULL, 'waiting', NULL, q_remind_at[i], q_addressees[i])
        ON CONFLICT (session_id, tool_call_id) DO UPDATE SET question = EXCLUDED.question,
            options = EXCLUDED.options, asker_id = EXCLUDED.asker_id, asked_at = EXCLUDED.asked_at,
            deadline = EXCLUDED.deadline, posted_message_id = NULL, status = 'waiting', posted_after = NULL,
            remind_at = EXCLUDED.remind_at, addressee = EXCLUDED.addressee;
    END LOOP;
    IF cardinality(p_inbox_done) > 0 THEN  -- mostly none: no statement then
        UPDATE inbox SET status = 'done' WHERE id = ANY(p_inbox_done);
    END IF;
    IF u_session IS NOT NULL THEN  -- the segment's cost, in the same commit
        PERFORM bot_usage(u_session, u_run_no, u_model, u_steps, u_prompt, u_completion, u_calls, u_cost,
                          u_outcome, p_now);
    END IF;
    FOR i IN 1..n LOOP
        INSERT INTO outbox (session_id, chat_key, kind, body, status, created_at, tool_call_id)
        VALUES (p_session, v_chat, 'question',
                format('{"tool_call_id": %s, "question": %s, "options": %s, "lang": %s, "user_id": %s, '
                       '"user_name": %s}', to_json(q_call_ids[i]), to_json(q_texts[i]), q_options[i],
                       to_json(v_lang), to_json(q_asker_ids[i]),
                       to_json(COALESCE(NULLIF(q_addressees[i], ''), v_asker_name))),
                'pending', p_now, q_call_ids[i])
        RETURNING id INTO v_id;
        v_ids := v_ids || v_id;
    END LOOP;
    RETURN v_ids;
END $$;

-- s_*: the sign-off row to store (SIGNOFF_COLS), all NULL when the run asks for none; u_*: the
-- segment's usage (bot_usage), all NULL when there is none to store.
CREATE FUNCTION bot_finish_run(
    f_chat TEXT, f_owner TEXT, f_fence BIGINT, p_session TEXT, p_bodies TEXT[], p_inbox_done BIGINT[],
    o_kinds TEXT[], o_bodies TEXT[], s_id TEXT, s_session TEXT, s_chat TEXT, s_status TEXT, s_approvers TEXT,
    s_requested_at DOUBLE PRECISION, s_remind_at DOUBLE PRECISION, s_deadline DOUBLE PRECISION,
    s_reminded INTEGER, s_decided_by TEXT, s_decided_at DOUBLE PRECISION, s_reason TEXT, u_session TEXT, u_run_no INTEGER, u_model TEXT, u_steps INTEGER, u_prompt BIGINT,
    u_completion BIGINT, u_calls BIGINT, u_cost DOUBLE PRECISION, u_outcome TEXT,
    p_now DOUBLE PRECISION
) RETURNS BIGINT[]
LANGUAGE plpgsql AS $$
DECLARE
    v_chat TEXT;
    v_id BIGINT;
    v_ids BIGINT[] := '{}';
BEGIN
    PERFORM bot_check_fence(f_chat, f_owner, f_fence);
    UPDATE sessions SET state = CASE WHEN s_id IS NULL THEN 'idle' ELSE 'signoff' END, updated_at = p_now
     WHERE id = p_session RETURNING chat_key INTO v_chat;
    PERFORM bot_append(p_session, p_bodies);
    IF s_id IS NOT NULL THEN
        INSERT INTO signoffs (id, session_id, chat_key, status, approvers, requested_at, remind_at, deadline,
                              reminded, decided_by, decided_at, reason)
        VALUES (s_id, s_session, s_chat, s_status, s_approvers, s_requested_at, s_remind_at, s_deadline,
                s_reminded, s_decided_by, s_decided_at, s_reason);
    END IF;
    IF cardinality(p_inbox_done) > 0 THEN  -- mostly none: no statement then
        UPDATE inbox SET status = 'done' WHERE id = ANY(p_inbox_done);
    END IF;
    IF u_session IS NOT NULL THEN  -- the segment's cost, in the same commit
        PERFORM bot_usage(u_session, u_run_no, u_model, u_steps, u_prompt, u_completion, u_calls, u_cost,
                          u_outcome, p_now);
    END IF;
    FOR i IN 1..COALESCE(array_length(o_kinds, 1), 0) LOOP
        INSERT INTO outbox (session_id, chat_key, kind, body, status, created_at, tool_call_id)
        VALUES (p_session, v_chat, o_kinds[i], o_bodies[i], 'pending', p_now, NULL)
        RETURNING id INTO v_id;
        v_ids := v_ids || v_id;
    END LOOP;
    RETURN v_ids;
END $$;

CREATE FUNCTION bot_resolve_question(
    f_chat TEXT, f_owner TEXT, f_fence BIGINT, p_session TEXT, p_call_id TEXT, p_body TEXT, p_status TEXT,
    p_inbox_id BIGINT, p_now DOUBLE PRECISION
) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(f_chat, f_owner, f_fence);
    UPDATE questions SET status = p_status
     WHERE session_id = p_session AND tool_call_id = p_call_id AND status = 'waiting';
    IF NOT FOUND THEN
        RETURN FALSE;
    END IF;
    -- the run resumes once every question of its turn is answered or expired; the row is
    -- updated either way (the same values while a question still waits): bot_append's lock
    UPDATE sessions SET state = CASE WHEN q.waiting THEN state ELSE 'working' END,
           updated_at = CASE WHEN q.waiting THEN updated_at ELSE p_now END
      FROM (SELECT EXISTS (SELECT 1 FROM questions WHERE session_id = p_session AND status = 'waiting') AS waiting) AS q
     WHERE id = p_session;
    PERFORM bot_append(p_session, ARRAY[p_body]);
    IF p_inbox_id IS NOT NULL THEN
        UPDATE inbox SET status = 'done' WHERE id = p_inbox_id;
    END IF;
    RETURN TRUE;
END $$;

-- A segment's usage: added to its session's totals, then to its run's row (created by the run's
-- first segment). The caller has checked the fence: bot_add_usage, or the run's end (bot_pause,
-- bot_finish_run), which stores it in the same transaction (u_session NULL: none to store).
CREATE FUNCTION bot_usage(
    u_session TEXT, u_run_no INTEGER, u_model TEXT, u_steps INTEGER, u_prompt BIGINT, u_completion BIGINT,
    u_calls BIGINT, u_cost DOUBLE PRECISION, u_outcome TEXT, p_now DOUBLE PRECISION
) RETURNS void
LANGUAGE sql AS $$
    WITH s AS (UPDATE sessions SET prompt_tokens = prompt_tokens + u_prompt,
                      completion_tokens = completion_tokens + u_completion, llm_calls = llm_calls + u_calls,
                      cost_usd = cost_usd + u_cost
                WHERE id = u_session RETURNING chat_key)
    INSERT INTO runs AS r (session_id, run_no, chat_key, model, segments, steps, prompt_tokens, completion_tokens,
                           llm_calls, cost_usd, outcome, started_at, updated_at)
    SELECT u_session, u_run_no, s.chat_key, u_model, 1, u_steps, u_prompt, u_completion, u_calls, u_cost, u_outcome,
           p_now, p_now FROM s
    ON CONFLICT (session_id, run_no) DO UPDATE SET model = EXCLUDED.model, segments = r.segments + 1,
        steps = EXCLUDED.steps, prompt_tokens = r.prompt_tokens + EXCLUDED.prompt_tokens,
        completion_tokens = r.completion_tokens + EXCLUDED.completion_tokens,
        llm_calls = r.llm_calls + EXCLUDED.llm_calls, cost_usd = r.cost_usd + EXCLUDED.cost_usd,
        outcome = EXCLUDED.outcome, updated_at = EXCLUDED.updated_at
$$;

CREATE FUNCTION bot_add_usage(
    f_chat TEXT, f_owner TEXT, f_fence BIGINT, u_session TEXT, u_run_no INTEGER, u_model TEXT, u_steps INTEGER,
    u_prompt BIGINT, u_completion BIGINT, u_calls BIGINT, u_cost DOUBLE PRECISION, u_outcome TEXT,
    p_now DOUBLE PRECISION
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bot_check_fence(f_chat, f_owner, f_fence);
    PERFORM bot_usage(u_session, u_run_no, u_model, u_steps, u_prompt, u_completion, u_calls, u_cost, u_outcome,
                      p_now);
END $$;

-- A posted question records its message and the inbox watermark (see pg_writes.outbox_sent:
-- `p_posted_after`, read before the platform was called; else the newest inbox id now).
CREATE FUNCTION bot_outbox_sent(
    f_chat TEXT, f_owner TEXT, f_fence BIGINT, p_outbox_id BIGINT, p_parts INTEGER, p_message_id TEXT,
    p_posted_after BIGINT
) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_session TEXT;
    v_call_id TEXT;
    v_message_id TEXT;
    v_kind TEXT;
BEGIN
    PERFORM bot_check_fence(f_chat, f_owner, f_fence);
    UPDATE outbox SET status = 'sent', parts_sent = p_parts, message_id = COALESCE(p_message_id, message_id)
     WHERE id = p_outbox_id RETURNING session_id, tool_call_id, message_id, kind
      INTO v_session, v_call_id, v_message_id, v_kind;
    IF v_kind = 'question' THEN  -- posted: from now on a message can answer it
        UPDATE questions SET posted_message_id = v_message_id,
               posted_after = COALESCE(p_posted_after, (SELECT COALESCE(MAX(id), 0) FROM inbox))
         WHERE session_id = v_session AND tool_call_id = v_call_id;
    END IF;
END $$;
