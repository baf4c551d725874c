-- A message set aside while the chat's question waits (or handed to a working run) has had its
-- notice ("answer my question first", "noted") queued, so no later actor repeats it. The twin
-- of migrations/postgres/0006_inbox_noticed.sql.
ALTER TABLE inbox ADD COLUMN noticed INTEGER NOT NULL DEFAULT 0;
