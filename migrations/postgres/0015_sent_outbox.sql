-- A web page that reloads shows again what its session delivered: an answer's review and the
-- plan's files, after a restart too (Store.sent_outbox). Rows are read by session, in order.
-- The twin of migrations/0011_sent_outbox.sql.
CREATE INDEX outbox_sent_by_session ON outbox(session_id, id) WHERE status = 'sent';
