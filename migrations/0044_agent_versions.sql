-- Drafts, publishing and history (issue 45, part 3). What an agent does — its instructions,
-- model, fallback model, capabilities (tools, experts, the knowledge base) and narrowed tools —
-- is published in numbered versions; changes wait in a draft until published.
-- The published version the `agents` row holds; 0: none recorded yet (the row's behaviour becomes
-- version 1 when the first change is published).
ALTER TABLE agents ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
-- The version that answered an assistant message (NULL: before versions, or a person's message).
ALTER TABLE messages ADD COLUMN agent_version BIGINT;

-- Every published version: the behaviour as JSON, who published it and when, what changed
-- (a short summary), and the version it restored (if it was a restore).
CREATE TABLE agent_versions (
    agent_id TEXT NOT NULL REFERENCES agents (id),
    version BIGINT NOT NULL,
    behaviour TEXT NOT NULL,
    published_by TEXT,
    published_at BIGINT NOT NULL,
    note TEXT NOT NULL,
    changes TEXT NOT NULL,
    restored_from BIGINT,
    PRIMARY KEY (agent_id, version)
);

-- One draft per agent: the behaviour being edited, the published version it started from.
CREATE TABLE agent_drafts (
    agent_id TEXT PRIMARY KEY REFERENCES agents (id),
    behaviour TEXT NOT NULL,
    base_version BIGINT NOT NULL,
    updated_by TEXT,
    updated_at BIGINT NOT NULL
);
