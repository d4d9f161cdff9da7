-- Reports (issue 45, part 1; definitions in docs/reports.md). Reports read a roll-up: one row
-- of facts per conversation, kept up to date from the conversations, messages and ratings
-- changed since the last refresh, so that a 90-day report over 100,000 conversations reads one
-- narrow table instead of every message and event. Trial conversations have no row.
CREATE TABLE report_conversations (
    conversation_id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    team_id TEXT,
    -- The person behind the visitor (a merged contact's survivor).
    person_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    -- The agent's version of the first answer (NULL: none yet).
    version BIGINT,
    messages BIGINT NOT NULL,
    -- 1 when at least one assistant answer completed.
    answered BIGINT NOT NULL,
    closed BIGINT NOT NULL,
    -- The last message of anyone, and the last visitor message with no reply after it.
    last_activity_at BIGINT NOT NULL,
    unreplied_since BIGINT,
    handed_over_at BIGINT,
    -- asked, low_confidence, business_rule (NULL: never handed over).
    handover_reason TEXT,
    first_response_at BIGINT,
    first_response_by TEXT,
    -- First response and resolution times counting only the agent's business hours (= the
    -- wall-clock figure when it has none).
    first_response_business_ms BIGINT,
    closed_by_person_at BIGINT,
    resolution_business_ms BIGINT,
    -- 1 when an answer got a thumbs down or the conversation a rating of 1 or 2.
    rated_down BIGINT NOT NULL,
    thumbs_up BIGINT NOT NULL,
    thumbs_down BIGINT NOT NULL,
    -- The conversation's rating, 1 to 5.
    csat BIGINT,
    spend_usd DOUBLE PRECISION NOT NULL,
    refreshed_at BIGINT NOT NULL
);
-- Covering every column a report's scans read, so that a report reads this index in date order
-- and no table row (a random read per conversation) at all.
CREATE INDEX report_conversations_by_created ON report_conversations (created_at, agent_id, team_id, version,
    person_id, messages, answered, closed, last_activity_at, unreplied_since, handed_over_at, handover_reason,
    rated_down, thumbs_up, thumbs_down, csat, spend_usd);
-- Narrower, for counting people.
CREATE INDEX report_conversations_people ON report_conversations (created_at, person_id, version, agent_id, team_id);
-- The handed-over conversations with their times (first response and resolution).
CREATE INDEX report_conversations_handed ON report_conversations (created_at, handed_over_at, first_response_at,
    first_response_by, first_response_business_ms, closed_by_person_at, resolution_business_ms, version, agent_id,
    team_id) WHERE handed_over_at IS NOT NULL;
CREATE INDEX report_conversations_by_agent ON report_conversations (agent_id, created_at);

-- The console users who wrote in a conversation (an operator's "conversations handled").
CREATE TABLE report_handlers (
    conversation_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    first_at BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX report_handlers_by_user ON report_handlers (user_id, conversation_id);

-- How far the roll-up has read (one row): changes at or after `upto` minus a margin are read again.
CREATE TABLE report_refresh (
    id BIGINT PRIMARY KEY,
    upto BIGINT NOT NULL
);
INSERT INTO report_refresh (id, upto) VALUES (1, 0);

-- Who wrote an operator's reply (their id; `author` keeps the name shown).
ALTER TABLE messages ADD COLUMN author_id TEXT;

CREATE INDEX ratings_by_updated ON ratings (updated_at);
CREATE INDEX tool_calls_by_conversation ON tool_calls (conversation_id);
-- Unanswered questions read the newest signals first.
CREATE INDEX tool_calls_by_time ON tool_calls (created_at);
-- Covering the reports' spend per day and model.
CREATE INDEX usage_by_time ON usage_ledger (created_at, agent_id, model, conversation_id, cost_usd);
CREATE INDEX orders_by_time ON orders (created_at);
CREATE INDEX events_handoffs ON events (conversation_id) WHERE name = 'handoff';
