-- Identity tokens that cannot be replayed (issue 41): a token's `jti`, when it has one, is
-- accepted once per agent while the token lives (kept until its `exp`, then swept).
CREATE TABLE identity_jtis (
    agent_id TEXT NOT NULL,
    jti TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, jti)
);
CREATE INDEX identity_jtis_by_expiry ON identity_jtis (expires_at);

-- The longest token lifetime an agent accepts is ten minutes by default (it was a day): agents
-- still on the old default get the new one.
UPDATE agents SET identity_max_age_secs = 600 WHERE identity_max_age_secs = 86400;
