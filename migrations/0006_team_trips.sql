-- Team trips: a question can be addressed to one traveller (several wait at once in a chat, one
-- per person). `addressee` is the traveller as the request names them ("@bo", "ana", a Slack
-- user id); asker_id is then the platform id of the one person who may answer ("" when only the
-- handle is known: Telegram @usernames are matched by handle).
ALTER TABLE questions ADD COLUMN addressee TEXT NOT NULL DEFAULT '';
