-- What console users (and the CLI) did that changes or reveals data (issue 16): who, when, what,
-- never message content.
CREATE TABLE audit_log (
    id TEXT PRIMARY KEY,
    at BIGINT NOT NULL,
    -- The console user (NULL: the command line, or a failed sign-in).
    actor_id TEXT,
    -- Their email at the time, `cli`, or the address a failed sign-in gave.
    actor TEXT NOT NULL,
    -- What was done, e.g. `agent.update`, `conversation.claim`, `person.delete`.
    action TEXT NOT NULL,
    -- What it was done to (an agent key, a conversation id, a user id…).
    target TEXT,
    -- A short note (which settings changed…), never message content.
    detail TEXT NOT NULL
);
CREATE INDEX audit_log_by_time ON audit_log (at);
