-- Operators' notifications (issue 43 part 6): what each user wants, Web Push subscriptions and the
-- push outbox, the server's VAPID key, and when a notification went out in a mail digest.

-- Per user. `kinds`: the kinds they want, `,assigned,mention,queue,reply,` (a kind left out is
-- not written at all). Channels: `in_console` (sound, desktop notification, tab title), `push`
-- (Web Push to every subscribed browser), `digest` (a mail of what is still unread after
-- `digest_delay_min` minutes). No row: every kind, in the console and by push, no digest.
CREATE TABLE operator_notify_prefs (
    user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    kinds TEXT NOT NULL,
    in_console BIGINT NOT NULL DEFAULT 1,
    push BIGINT NOT NULL DEFAULT 1,
    digest BIGINT NOT NULL DEFAULT 0,
    digest_delay_min BIGINT NOT NULL DEFAULT 15,
    updated_at BIGINT NOT NULL
);

-- A browser's push subscription (RFC 8030): where to POST, and its keys (RFC 8291: `p256dh` the
-- browser's P-256 public key, `auth` its 16-byte secret; both base64url). Deleted when the push
-- service answers 404 or 410.
CREATE TABLE push_subscriptions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    endpoint TEXT NOT NULL,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX push_subscriptions_by_endpoint ON push_subscriptions (endpoint);
CREATE INDEX push_subscriptions_by_user ON push_subscriptions (user_id);

-- The push outbox: one row per notification and subscription, written in the notification's
-- transaction. `status`: `pending`, `sent`, `failed` or `skipped` (read before it went out).
CREATE TABLE push_deliveries (
    notification_id TEXT NOT NULL REFERENCES operator_notifications (id) ON DELETE CASCADE,
    subscription_id TEXT NOT NULL REFERENCES push_subscriptions (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    locked_until BIGINT,
    locked_by TEXT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (notification_id, subscription_id)
);
CREATE INDEX push_deliveries_due ON push_deliveries (status, next_attempt_at);
CREATE INDEX push_deliveries_by_subscription ON push_deliveries (subscription_id);

-- The server's VAPID key pair (RFC 8292), made once (`id` = 'main'): `public_key` the
-- uncompressed P-256 point, base64url; `private_key` sealed with the secret key.
CREATE TABLE vapid_keys (
    id TEXT PRIMARY KEY,
    public_key TEXT NOT NULL,
    private_key TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- When the notification went out in a mail digest (once per notification).
ALTER TABLE operator_notifications ADD COLUMN digested_at BIGINT;
