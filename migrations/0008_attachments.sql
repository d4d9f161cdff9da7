-- Images visitors attach to their messages (PNG, JPEG or WebP, 5 MiB at most). An upload belongs
-- to its visitor; sending a message with it links it to the conversation and the message.
-- Uploads never linked are deleted after a day. `data` is BYTEA, PostgreSQL's binary type;
-- SQLite stores the bytes as a BLOB whatever the declared type.
CREATE TABLE attachments (
    id TEXT PRIMARY KEY,
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    conversation_id TEXT REFERENCES conversations (id),
    message_id TEXT REFERENCES messages (id),
    mime TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    data BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX attachments_by_visitor ON attachments (visitor_id, created_at);
CREATE INDEX attachments_by_conversation ON attachments (conversation_id);
