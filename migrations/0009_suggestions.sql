-- Who may change what in a conversation with several people: a message from someone who may not
-- make the change it asks for (a bystander, a traveller about the whole trip) is kept here as a
-- suggestion until the person who asked for the trip says Yes (it goes to the chat's inbox as
-- their change) or No. The twin of migrations/postgres/0012_suggestions.sql.
CREATE TABLE suggestions (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL,
    chat_key    TEXT NOT NULL,
    status      TEXT NOT NULL,  -- waiting | accepted | declined
    body        TEXT NOT NULL,  -- the message as its inbox row had it (IncomingMessage JSON)
    sender_id   TEXT NOT NULL,  -- who suggested it
    asked_of    TEXT NOT NULL,  -- who is asked to decide
    created_at  REAL NOT NULL,
    decided_by  TEXT,
    decided_at  REAL
);
CREATE INDEX suggestions_by_session ON suggestions(session_id, created_at);
