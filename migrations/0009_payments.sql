-- Payments that cannot be faked. `payment_webhooks`: the ids (`webhook-id`) of webhook calls
-- already accepted, so that a captured call replayed within the 5-minute window is refused, across
-- restarts and servers too; kept a day. `payment_keys`: the key that signs links to the pay page
-- (`pay_link`, hex), made on first start and shared by every server on the database.
CREATE TABLE payment_webhooks (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL,
    received_at BIGINT NOT NULL
);
CREATE INDEX payment_webhooks_by_time ON payment_webhooks (received_at);

CREATE TABLE payment_keys (
    name TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
