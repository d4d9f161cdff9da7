-- The consulting vertical: knowledge bases, visitor memories, payment orders, news.

CREATE TABLE knowledge_bases (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX knowledge_bases_by_agent ON knowledge_bases (agent_id);

-- `kind`: `article` (reference text) or `experience` (a practical note from past cases).
CREATE TABLE articles (
    id TEXT PRIMARY KEY,
    knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    category TEXT,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    source_url TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX articles_by_knowledge_base ON articles (knowledge_base_id);

-- Articles split for retrieval; `embedding` is a JSON array when an embeddings endpoint is set.
CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    article_id TEXT NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    knowledge_base_id TEXT NOT NULL,
    ordinal BIGINT NOT NULL,
    text TEXT NOT NULL,
    embedding TEXT
);
CREATE INDEX chunks_by_article ON chunks (article_id);

-- What a visitor told us, kept across conversations. `kind`: FACT, INTENT, PREFERENCE.
CREATE TABLE memories (
    id TEXT PRIMARY KEY,
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    agent_id TEXT NOT NULL REFERENCES agents (id),
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    category TEXT,
    importance BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX memories_by_visitor ON memories (visitor_id, importance);

-- Payment orders. The amount always comes from the server's price table.
CREATE TABLE orders (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    message_id TEXT NOT NULL,
    service_type TEXT NOT NULL,
    category TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    method TEXT NOT NULL,
    status TEXT NOT NULL,
    provider TEXT NOT NULL,
    pay_url TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    paid_at BIGINT,
    updated_at BIGINT NOT NULL
);
CREATE INDEX orders_pending ON orders (expires_at) WHERE status = 'pending';
CREATE INDEX orders_by_agent ON orders (agent_id, created_at);

-- News items; `agent_id` NULL means every agent.
CREATE TABLE news_items (
    id TEXT PRIMARY KEY,
    agent_id TEXT REFERENCES agents (id),
    category TEXT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    published_on TEXT NOT NULL,
    source TEXT NOT NULL,
    url TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX news_by_date ON news_items (published_on);
