-- Triggers and teasers (issue 44, part 1): an agent's rules for starting a conversation, kept as
-- the protocol's `Trigger` JSON, in the owner's order; the loader evaluates the enabled ones.
CREATE TABLE engage_triggers (
    agent_id TEXT NOT NULL REFERENCES agents (id),
    name TEXT NOT NULL,
    position BIGINT NOT NULL,
    enabled BIGINT NOT NULL DEFAULT 1,
    rule TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, name)
);

-- How often each trigger was shown and clicked, per UTC day (ms of its midnight); a row stays
-- when its trigger is removed, so that the dashboard's past figures do not change.
CREATE TABLE engage_counts (
    agent_id TEXT NOT NULL REFERENCES agents (id),
    trigger_name TEXT NOT NULL,
    day BIGINT NOT NULL,
    shown BIGINT NOT NULL DEFAULT 0,
    clicked BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, trigger_name, day)
);
