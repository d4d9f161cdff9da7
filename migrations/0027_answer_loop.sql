-- The answer quality loop (issue 17): visitors rate answers (1 helpful, -1 not) and, once a
-- person has closed it, the whole conversation (1 to 5), with an optional comment. Rating again
-- replaces the earlier rating.
CREATE TABLE ratings (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    -- The rated answer; '' for a rating of the whole conversation.
    message_id TEXT NOT NULL,
    score BIGINT NOT NULL,
    comment TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ratings_one_per_target ON ratings (conversation_id, message_id);
CREATE INDEX ratings_by_agent ON ratings (agent_id, updated_at);

-- Operators' saved replies, per agent, inserted into the reply box with `/shortcut`.
CREATE TABLE saved_replies (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    -- What the operator types after `/` (lower case letters, digits, `-` and `_`).
    shortcut TEXT NOT NULL,
    body TEXT NOT NULL,
    created_by TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX saved_replies_by_shortcut ON saved_replies (agent_id, shortcut);
