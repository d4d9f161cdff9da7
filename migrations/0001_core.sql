-- Parley's core tables. Portable SQL: runs unchanged on SQLite and PostgreSQL.
-- Times are Unix milliseconds (BIGINT); lists and objects are JSON text.

CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    public_key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    vertical TEXT NOT NULL,
    capabilities TEXT NOT NULL,
    enabled_tools TEXT,
    provider TEXT NOT NULL,
    base_url TEXT,
    api_key TEXT,
    model TEXT NOT NULL,
    fallback_model TEXT,
    system_prompt TEXT NOT NULL,
    greeting TEXT NOT NULL,
    theme_color TEXT NOT NULL,
    launcher_position TEXT NOT NULL,
    allowed_origins TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE visitors (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    token_hash TEXT NOT NULL UNIQUE,
    host_origin TEXT,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    status TEXT NOT NULL,
    lead_submitted BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX conversations_by_visitor ON conversations (visitor_id, updated_at);
CREATE INDEX conversations_by_agent ON conversations (agent_id, updated_at);

CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    blocks TEXT NOT NULL,
    status TEXT NOT NULL,
    client_message_id TEXT,
    reply_to TEXT,
    author TEXT,
    start_seq BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX messages_by_conversation ON messages (conversation_id, created_at);
-- Partial indexes: most messages have no client id, and only a few are streaming at a time.
CREATE UNIQUE INDEX messages_by_client_id ON messages (client_message_id, conversation_id)
    WHERE client_message_id IS NOT NULL;
CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';

CREATE TABLE tool_calls (
    id TEXT PRIMARY KEY,
    message_id TEXT NOT NULL REFERENCES messages (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    call_id TEXT NOT NULL,
    hop BIGINT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT,
    status TEXT NOT NULL,
    error TEXT,
    duration_ms BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX tool_calls_by_message ON tool_calls (message_id);

-- The event log of each conversation's stream, for replay after Last-Event-ID. Consecutive
-- tokens are stored as one row: `seq`..`last_seq`, `data` a JSON array of their texts.
CREATE TABLE events (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    seq BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

CREATE TABLE leads (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    name TEXT NOT NULL,
    email TEXT,
    phone TEXT,
    message TEXT NOT NULL,
    status TEXT NOT NULL,
    notes TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX leads_by_agent ON leads (agent_id, created_at);

-- One row per upstream model call attempt, failures included.
CREATE TABLE usage_ledger (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    conversation_id TEXT,
    message_id TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    outcome TEXT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cached_tokens BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    latency_ms BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX usage_by_conversation ON usage_ledger (conversation_id);
CREATE INDEX usage_by_agent ON usage_ledger (agent_id, created_at);
