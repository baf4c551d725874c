-- bot_append and bot_usage in PL/pgSQL, with the same statements. A LANGUAGE sql function that
-- is not inlined (these two write, so they never are) is parsed and planned again at every
-- call, while PL/pgSQL keeps each statement's plan for the connection's life. Every step calls
-- bot_append, and a run's pause and end call bot_usage: on a 2-core machine bot_append_step
-- (two messages) took 0.35 ms instead of 0.50 ms a call, end to end, and PostgreSQL's share of
-- a conversation's CPU fell with it (benchmarks/bench_pg_scale.py).

CREATE OR REPLACE FUNCTION bot_append(p_session TEXT, p_bodies TEXT[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO messages (session_id, seq, body)
    SELECT p_session, base.n + u.ord, u.body FROM unnest(p_bodies) WITH ORDINALITY AS u(body, ord),
           (SELECT COALESCE(MAX(seq), 0) AS n FROM messages WHERE session_id = p_session) AS base;
END $$;

CREATE OR REPLACE FUNCTION bot_usage(
    u_session TEXT, u_run_no INTEGER, u_model TEXT, u_steps INTEGER, u_prompt BIGINT, u_completion BIGINT,
    u_calls BIGINT, u_cost DOUBLE PRECISION, u_outcome TEXT, p_now DOUBLE PRECISION
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
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
        outcome = EXCLUDED.outcome, updated_at = EXCLUDED.updated_at;
END $$;
