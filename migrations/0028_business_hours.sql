-- Business hours and presence (issue 17). Outside an agent's hours the AI keeps answering, the
-- escalation offers to leave a message, and the panel says when people are back.
CREATE TABLE business_hours (
    agent_id TEXT PRIMARY KEY REFERENCES agents (id),
    -- An IANA time zone name (`Europe/Paris`).
    time_zone TEXT NOT NULL,
    -- JSON: seven lists, Monday first, of [open, close] minutes after local midnight.
    weekly TEXT NOT NULL,
    -- JSON: local dates (`YYYY-MM-DD`) nobody is in.
    closed_dates TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Console users: away (not taking conversations), and when their console last had its live feed
-- open (online = seen in the last two minutes and not away).
ALTER TABLE users ADD COLUMN away BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN last_seen_at BIGINT;
