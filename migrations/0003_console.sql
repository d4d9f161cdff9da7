-- The admin console: people who sign in, their sessions, and human takeover of conversations.

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    -- `admin` or `operator`.
    role TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_login_at BIGINT
);

-- tower-sessions records: `data` is JSON, `expiry` Unix milliseconds.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expiry BIGINT NOT NULL
);
CREATE INDEX sessions_by_expiry ON sessions (expiry);

-- Who took over a conversation (status `human`); NULL while the bot answers.
ALTER TABLE conversations ADD COLUMN claimed_by TEXT;
ALTER TABLE conversations ADD COLUMN claimed_at BIGINT;
CREATE INDEX conversations_by_status ON conversations (status, updated_at);

-- Spend limit of one conversation, in US dollars.
ALTER TABLE agents ADD COLUMN budget_usd DOUBLE PRECISION NOT NULL DEFAULT 0.5;
