-- The owner's reach (issue 17): outbound webhooks. An agent's endpoints receive signed events
-- (Standard Webhooks); every event is written to the outbox in the same transaction as the change
-- it reports, and delivered from there at least once.

CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    url TEXT NOT NULL,
    -- The events it receives, comma-separated with a comma at each end (`,lead.created,order.paid,`)
    -- so that one `LIKE '%,name,%'` finds it on SQLite and PostgreSQL alike.
    events TEXT NOT NULL,
    -- The signing secret (`whsec_…`), sealed like provider keys: it is read back to sign.
    secret TEXT NOT NULL,
    -- The first characters of the secret, to recognise it.
    prefix TEXT NOT NULL,
    enabled BIGINT NOT NULL DEFAULT 1,
    -- Why it was disabled (NULL: by hand, or enabled).
    disabled_reason TEXT,
    -- The last 2xx answer it gave.
    last_success_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_by_agent ON webhook_endpoints (agent_id);

-- One event for one endpoint: pending until a 2xx answer, retried with growing delays, then
-- `failed`. `id` is the `webhook-id` the receiver sees on every attempt (it deduplicates with it).
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id),
    event TEXT NOT NULL,
    -- The conversation it is about (deleted with it: the payload can hold a visitor's details).
    conversation_id TEXT,
    -- The JSON body, exactly as signed and sent.
    payload TEXT NOT NULL,
    -- `pending`, `delivered` or `failed`.
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    -- While a process sends it: until when no other process may (a crash lets go by itself).
    locked_until BIGINT,
    locked_by TEXT,
    first_attempt_at BIGINT,
    last_attempt_at BIGINT,
    -- The last attempt's HTTP status (NULL: no answer) and, when it failed, why.
    last_status BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at);
CREATE INDEX webhook_deliveries_by_conversation ON webhook_deliveries (conversation_id);

-- Every attempt, for the delivery log.
CREATE TABLE webhook_attempts (
    id TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
    at BIGINT NOT NULL,
    status BIGINT,
    error TEXT,
    duration_ms BIGINT NOT NULL
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, at);
