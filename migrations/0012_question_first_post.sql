-- A question's watermark is recorded before its first posting attempt and kept across re-posts
-- (bot.store.sqlite.writes.record_watermark; an attempt that failed clears it): a process
-- killed between the platform taking the question and recording the posting re-posts it after
-- the restart, and the answer the person gave in between must still be above the watermark.
-- NULL until the first attempt; a question stored by an older build gets it at its next
-- attempt. The twin of migrations/postgres/0016_question_first_post.sql.
ALTER TABLE questions ADD COLUMN first_post_after INTEGER;  -- the last inbox id before the first attempt
