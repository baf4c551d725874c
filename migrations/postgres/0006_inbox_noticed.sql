-- A message set aside while the chat's question waits (or handed to a working run) has had its
-- notice ("answer my question first", "noted") queued: with several processes the chat's next
-- owner must neither repeat that notice nor treat the row as work to take the chat for
-- (bot.store.pg_leases.unowned_chats_with_work). The twin of migrations/0007_inbox_noticed.sql.
ALTER TABLE inbox ADD COLUMN noticed INTEGER NOT NULL DEFAULT 0;
