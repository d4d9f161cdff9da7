-- Visitors who left (issue 44, part 2): whether the visitor follows the conversation now, when
-- they stopped, the site page they wrote from (where the return link leads), and which replies
-- were mailed to them; the links and reply addresses those mails carry; the mail's Reply-To.
ALTER TABLE conversations ADD COLUMN page_url TEXT;
-- 1 while a visitor's event stream of the conversation is open on a server, else 0.
ALTER TABLE conversations ADD COLUMN visitor_here BIGINT NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN visitor_left_at BIGINT;
-- Set when a reply may need mailing (an operator's reply, a visitor's mail answered by the agent);
-- the return-mail job looks only at these rows.
ALTER TABLE conversations ADD COLUMN return_pending_since BIGINT;
-- Replies up to this time (ms) were mailed.
ALTER TABLE conversations ADD COLUMN return_mailed_upto BIGINT NOT NULL DEFAULT 0;
-- When the visitor last wrote by mail: the agent's answers after it are mailed back too.
ALTER TABLE conversations ADD COLUMN mail_in_at BIGINT;
CREATE INDEX conversations_return_pending ON conversations (return_pending_since);

-- A return mail's link (`purpose` 'link': opens the conversation, until it expires) and reply
-- address ('reply': takes one mail, once). Only the SHA-256 of the token is kept.
CREATE TABLE return_tokens (
    token_hash TEXT PRIMARY KEY,
    purpose TEXT NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    visitor_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);
CREATE INDEX return_tokens_conversation ON return_tokens (conversation_id);

ALTER TABLE mail_outbox ADD COLUMN reply_to TEXT;
