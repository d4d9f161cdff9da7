-- Known visitors (issue 16): the host site signs its user's identity (a JWT, HS256) with a secret
-- of the agent; a verified user's conversations, memories, leads and orders follow them across
-- browsers.

-- An agent's identity secrets. The newest one without `expires_at` signs; a replaced one keeps
-- being accepted until its `expires_at` (the grace period of a rotation). Sealed like provider
-- keys (`enc:v1:…`): the HMAC key has to be read back to verify a signature.
CREATE TABLE identity_secrets (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    secret TEXT NOT NULL,
    -- The first characters, to recognise it in a list.
    prefix TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT
);
CREATE INDEX identity_secrets_by_agent ON identity_secrets (agent_id, created_at);

-- A user of the host site, as an agent knows them.
CREATE TABLE end_users (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    -- The host site's own user id (the token's `sub`).
    subject TEXT NOT NULL,
    name TEXT,
    email TEXT,
    -- The visitor row that holds the user's conversations, memories, leads and orders.
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX end_users_by_subject ON end_users (agent_id, subject);
CREATE UNIQUE INDEX end_users_by_visitor ON end_users (visitor_id);

-- A browser of an identified user: its token stands for the user's visitor row (NULL: for its
-- own row).
ALTER TABLE visitors ADD COLUMN acts_as TEXT;
CREATE INDEX visitors_by_acts_as ON visitors (acts_as);

-- Per agent: only identified visitors may chat, and the longest lifetime (`exp` - `iat`, seconds)
-- of a token it accepts.
ALTER TABLE agents ADD COLUMN identity_required BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN identity_max_age_secs BIGINT NOT NULL DEFAULT 86400;

-- Per agent: conversations last active more than this many days ago are deleted (a daily job)
-- with everything attached to them. NULL: kept.
ALTER TABLE agents ADD COLUMN retention_days BIGINT;
