-- Email (issue 17): operators' notifications, visitors' transcripts and the daily summary, sent
-- from an outbox like the webhooks (written with the change, sent at least once, retried).
CREATE TABLE mail_outbox (
    id TEXT PRIMARY KEY,
    to_address TEXT NOT NULL,
    subject TEXT NOT NULL,
    text_body TEXT NOT NULL,
    html_body TEXT NOT NULL,
    -- `waiting_human`, `lead`, `order_paid`, `daily_summary` or `transcript`.
    kind TEXT NOT NULL,
    -- The conversation it is about (deleted with it), if any.
    conversation_id TEXT,
    -- `pending`, `sent` or `failed`.
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    locked_until BIGINT,
    locked_by TEXT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    sent_at BIGINT
);
CREATE INDEX mail_outbox_due ON mail_outbox (status, next_attempt_at);
CREATE INDEX mail_outbox_by_conversation ON mail_outbox (conversation_id);

-- What each console user is mailed about: a comma-separated list with a comma at each end
-- (`,waiting_human,lead,`).
ALTER TABLE users ADD COLUMN notify_events TEXT NOT NULL DEFAULT '';
