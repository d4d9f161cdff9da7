-- Access tokens of the MCP server: one agent each, stored as a SHA-256 hash (the token itself is
-- shown once, at creation). `feature_set`: `base` or `detail`; `output_format`: `raw` or `text`.

CREATE TABLE mcp_tokens (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    -- The first characters of the token, to recognise it in a list.
    token_prefix TEXT NOT NULL,
    feature_set TEXT NOT NULL,
    output_format TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at BIGINT
);
CREATE INDEX mcp_tokens_by_agent ON mcp_tokens (agent_id, created_at);
