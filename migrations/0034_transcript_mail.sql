-- Transcript mail without an open relay (issue 41): a transcript goes only to a signed-in
-- user's email or to an address the visitor confirmed with a code mailed to it first; every
-- mail a visitor causes (a code or a transcript) is counted per visitor, per address (an IPv6
-- address by its /64) and per agent over a day, across replicas.
CREATE TABLE mail_confirmations (
    visitor_id TEXT NOT NULL,
    address TEXT NOT NULL,
    code_hash TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    expires_at BIGINT NOT NULL,
    confirmed_at BIGINT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (visitor_id, address)
);
CREATE TABLE mail_requests (
    id TEXT PRIMARY KEY,
    visitor_id TEXT NOT NULL,
    client_ip TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX mail_requests_by_visitor ON mail_requests (visitor_id, created_at);
CREATE INDEX mail_requests_by_ip ON mail_requests (client_ip, created_at);
CREATE INDEX mail_requests_by_agent ON mail_requests (agent_id, created_at);
-- (Operators' notifications are batched per conversation: 0029's index on the conversation
-- finds the few mails of one.)
