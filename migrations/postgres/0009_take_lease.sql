-- Taking a chat's lease and looking at what the previous owner left, in one round trip
-- (bot.store.postgres.leases.take; issue 18). A process that takes a chat over re-drives a run its
-- previous owner left working and sends what it left in the outbox (bot.sessions), so it reads
-- the chat's open session and pending outbox right after the lease is its own. Here those reads
-- are the function's next statements: they run after the
-- lease row's UPDATE has waited out every fenced write of the previous owner (they lock that row
-- FOR SHARE until they commit) and takes a snapshot of its own, so it sees all of them, as the
-- separate reads after the lease's COMMIT did; the previous owner's later writes find the new
-- fence and are refused.
--
-- The fence is drawn in DO UPDATE, i.e. while the row is locked, so concurrent takeovers get
-- their numbers in the order they commit; the VALUES one is used only for a new row. No row
-- comes back while another owner's lease is live, or while the caller's own is (the caller
-- renews what it holds).
CREATE FUNCTION bot_take_lease(p_chat TEXT, p_owner TEXT, p_ttl_s DOUBLE PRECISION)
RETURNS TABLE (r_fence BIGINT, r_expires_at DOUBLE PRECISION, r_working_session TEXT, r_outbox_pending BOOLEAN)
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chat_leases AS l (chat_key, owner, fence, expires_at, acquired_at)
    VALUES (p_chat, p_owner, nextval('chat_lease_fence'), now() + make_interval(secs => p_ttl_s), now())
    ON CONFLICT (chat_key) DO UPDATE SET owner = EXCLUDED.owner, fence = nextval('chat_lease_fence'),
        expires_at = EXCLUDED.expires_at, acquired_at = EXCLUDED.acquired_at
    WHERE l.owner IS NULL OR l.expires_at <= now()
    RETURNING l.fence, extract(epoch FROM l.expires_at)::float8 INTO r_fence, r_expires_at;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    r_working_session := (SELECT s.id FROM sessions s WHERE s.chat_key = p_chat AND s.closed = 0
                           AND s.state = 'working');
    r_outbox_pending := EXISTS (SELECT 1 FROM outbox o WHERE o.chat_key = p_chat AND o.status = 'pending');
    RETURN NEXT;
END $$;
