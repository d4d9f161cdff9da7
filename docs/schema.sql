-- The current schema of every table, as the migrations in migrations/ leave it on SQLite
-- (PostgreSQL has the same tables and columns). Generated: do not edit; a test in
-- app/engine/src/store/schema_doc.rs checks it (PARLEY_WRITE_SCHEMA=1 rewrites it).

CREATE TABLE agent_drafts (
    agent_id TEXT PRIMARY KEY REFERENCES agents (id),
    behaviour TEXT NOT NULL,
    base_version BIGINT NOT NULL,
    updated_by TEXT,
    updated_at BIGINT NOT NULL
);

CREATE TABLE agent_versions (
    agent_id TEXT NOT NULL REFERENCES agents (id),
    version BIGINT NOT NULL,
    behaviour TEXT NOT NULL,
    published_by TEXT,
    published_at BIGINT NOT NULL,
    note TEXT NOT NULL,
    changes TEXT NOT NULL,
    restored_from BIGINT,
    PRIMARY KEY (agent_id, version)
);

CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    public_key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    vertical TEXT NOT NULL,
    capabilities TEXT NOT NULL,
    enabled_tools TEXT,
    provider TEXT NOT NULL,
    base_url TEXT,
    api_key TEXT,
    model TEXT NOT NULL,
    fallback_model TEXT,
    system_prompt TEXT NOT NULL,
    greeting TEXT NOT NULL,
    theme_color TEXT NOT NULL,
    launcher_position TEXT NOT NULL,
    allowed_origins TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
, budget_usd DOUBLE PRECISION NOT NULL DEFAULT 0.5, max_turns BIGINT, daily_cap_usd DOUBLE PRECISION, language TEXT NOT NULL DEFAULT 'auto', look TEXT NOT NULL DEFAULT '{}', max_tokens BIGINT, identity_required BIGINT NOT NULL DEFAULT 0, identity_max_age_secs BIGINT NOT NULL DEFAULT 86400, retention_days BIGINT, domain TEXT NOT NULL DEFAULT '{}', version BIGINT NOT NULL DEFAULT 0);

CREATE TABLE alerts (
    agent_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    day BIGINT NOT NULL,
    detail TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, kind, day)
);

CREATE INDEX alerts_by_time ON alerts (created_at);

CREATE TABLE answer_test_results (
    run_id TEXT NOT NULL REFERENCES answer_test_runs (id),
    test_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    name TEXT NOT NULL,
    turns TEXT NOT NULL,
    passed BIGINT NOT NULL,
    answer TEXT NOT NULL,
    status TEXT NOT NULL,
    tool_calls TEXT NOT NULL,
    sources TEXT NOT NULL,
    handed_over BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    duration_ms BIGINT NOT NULL,
    checks TEXT NOT NULL,
    error TEXT,
    PRIMARY KEY (run_id, test_id)
);

CREATE TABLE answer_test_runs (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    target TEXT NOT NULL,
    version BIGINT NOT NULL,
    status TEXT NOT NULL,
    total BIGINT NOT NULL,
    done BIGINT NOT NULL,
    passed BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    started_by TEXT,
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    process TEXT NOT NULL,
    error TEXT
);

CREATE INDEX answer_test_runs_by_agent ON answer_test_runs (agent_id, started_at);

CREATE TABLE answer_tests (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    name TEXT NOT NULL,
    turns TEXT NOT NULL,
    checks TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX answer_tests_by_agent ON answer_tests (agent_id, created_at);

CREATE TABLE articles (
    id TEXT PRIMARY KEY,
    knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    category TEXT,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    source_url TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
, source_id TEXT);

CREATE INDEX articles_by_knowledge_base ON articles (knowledge_base_id);

CREATE INDEX articles_by_source ON articles (source_id);

CREATE TABLE attachments (
    id TEXT PRIMARY KEY,
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    conversation_id TEXT REFERENCES conversations (id),
    message_id TEXT REFERENCES messages (id),
    mime TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    data BYTEA NOT NULL,
    created_at BIGINT NOT NULL
, client_ip TEXT);

CREATE INDEX attachments_by_conversation ON attachments (conversation_id);

CREATE INDEX attachments_by_visitor ON attachments (visitor_id, created_at);

CREATE INDEX attachments_parked ON attachments (client_ip) WHERE message_id IS NULL;

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

CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    article_id TEXT NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    knowledge_base_id TEXT NOT NULL,
    ordinal BIGINT NOT NULL,
    text TEXT NOT NULL,
    embedding TEXT
, url TEXT);

CREATE INDEX chunks_by_article ON chunks (article_id);

CREATE TABLE conversation_labels (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    label_id TEXT NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    added_by TEXT,
    added_at BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, label_id)
);

CREATE INDEX conversation_labels_by_label ON conversation_labels (label_id, conversation_id);

CREATE TABLE conversation_notes (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    author_id TEXT NOT NULL,
    author_name TEXT NOT NULL,
    body TEXT NOT NULL,
    mentions TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);

CREATE INDEX conversation_notes_by_conversation ON conversation_notes (conversation_id, created_at);

CREATE INDEX conversation_notes_by_created ON conversation_notes (created_at, id);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    status TEXT NOT NULL,
    lead_submitted BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
, claimed_by TEXT, claimed_at BIGINT, consulting_state TEXT, summary TEXT, summary_until BIGINT, assessment TEXT, slot_process TEXT, slot_token TEXT, team_id TEXT, assignee_id TEXT, assigned_at BIGINT, handoff_summary TEXT, handoff_summary_model TEXT, handoff_summary_at BIGINT, page_url TEXT, visitor_here BIGINT NOT NULL DEFAULT 0, visitor_left_at BIGINT, return_pending_since BIGINT, return_mailed_upto BIGINT NOT NULL DEFAULT 0, mail_in_at BIGINT, trial BIGINT NOT NULL DEFAULT 0);

CREATE INDEX conversations_by_agent ON conversations (agent_id, updated_at);

CREATE INDEX conversations_by_assignee ON conversations (assignee_id, status);

CREATE INDEX conversations_by_status ON conversations (status, updated_at);

CREATE INDEX conversations_by_team ON conversations (team_id, status);

CREATE INDEX conversations_by_updated ON conversations (updated_at, id);

CREATE INDEX conversations_by_visitor ON conversations (visitor_id, updated_at);

CREATE INDEX conversations_return_pending ON conversations (return_pending_since);

CREATE TABLE end_users (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    -- The host site's own user id (the token's `sub`).
    subject TEXT NOT NULL,
    name TEXT,
    email TEXT,
    -- The visitor row that holds the user's conversations, memories, leads and orders.
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX end_users_by_subject ON end_users (agent_id, subject);

CREATE UNIQUE INDEX end_users_by_visitor ON end_users (visitor_id);

CREATE TABLE engage_counts (
    agent_id TEXT NOT NULL REFERENCES agents (id),
    trigger_name TEXT NOT NULL,
    day BIGINT NOT NULL,
    shown BIGINT NOT NULL DEFAULT 0,
    clicked BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, trigger_name, day)
);

CREATE TABLE engage_triggers (
    agent_id TEXT NOT NULL REFERENCES agents (id),
    name TEXT NOT NULL,
    position BIGINT NOT NULL,
    enabled BIGINT NOT NULL DEFAULT 1,
    rule TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, name)
);

CREATE TABLE events (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    seq BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

CREATE INDEX events_handoffs ON events (conversation_id) WHERE name = 'handoff';

CREATE TABLE experts (
    name TEXT PRIMARY KEY,
    -- What the coordinator reads about when to call the expert (the tool's description).
    description TEXT NOT NULL,
    -- JSON Schema of the tool's input.
    input_schema TEXT NOT NULL,
    system_prompt TEXT NOT NULL,
    -- JSON list of tool names the expert may call (among those its agent has).
    tools TEXT NOT NULL,
    -- NULL: the coordinator's model.
    model TEXT,
    max_tokens BIGINT NOT NULL,
    enabled BIGINT NOT NULL DEFAULT 1,
    updated_at BIGINT NOT NULL
, agent_id TEXT, based_on TEXT);

CREATE TABLE http_tools (
    id TEXT PRIMARY KEY,
    -- The name the model and MCP clients see (SEP-986); never a built-in tool's.
    name TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    capability TEXT NOT NULL,
    -- JSON Schema of the arguments (an object schema).
    parameters TEXT NOT NULL,
    -- GET, POST, PUT, PATCH or DELETE.
    method TEXT NOT NULL,
    -- The endpoint; `{argument}` in its path is replaced by that argument.
    url TEXT NOT NULL,
    -- JSON list of [name, value] header pairs, sealed like provider keys (`enc:v1:…`); NULL: none.
    headers TEXT,
    timeout_ms BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE identity_jtis (
    agent_id TEXT NOT NULL,
    jti TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, jti)
);

CREATE INDEX identity_jtis_by_expiry ON identity_jtis (expires_at);

CREATE TABLE identity_secrets (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    secret TEXT NOT NULL,
    -- The first characters, to recognise it in a list.
    prefix TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT
);

CREATE INDEX identity_secrets_by_agent ON identity_secrets (agent_id, created_at);

CREATE TABLE jobs (
    name TEXT PRIMARY KEY,
    next_run_at BIGINT NOT NULL,
    last_run_by TEXT,
    last_run_at BIGINT
);

CREATE TABLE knowledge_bases (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
, topics TEXT NOT NULL DEFAULT '');

CREATE INDEX knowledge_bases_by_agent ON knowledge_bases (agent_id);

CREATE TABLE knowledge_sources (
    id TEXT PRIMARY KEY,
    knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    settings TEXT NOT NULL DEFAULT '{}',
    schedule TEXT NOT NULL DEFAULT 'off',
    next_sync_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX knowledge_sources_by_base ON knowledge_sources (knowledge_base_id);

CREATE TABLE labels (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    color TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX labels_by_key ON labels (name_key);

CREATE TABLE leads (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    name TEXT NOT NULL,
    email TEXT,
    phone TEXT,
    message TEXT NOT NULL,
    status TEXT NOT NULL,
    notes TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX leads_by_agent ON leads (agent_id, created_at);

CREATE INDEX leads_by_updated ON leads (updated_at, id);

CREATE INDEX leads_by_visitor ON leads (visitor_id, created_at);

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
, reply_to TEXT);

CREATE INDEX mail_outbox_by_conversation ON mail_outbox (conversation_id);

CREATE INDEX mail_outbox_due ON mail_outbox (status, next_attempt_at);

CREATE TABLE mail_requests (
    id TEXT PRIMARY KEY,
    visitor_id TEXT NOT NULL,
    client_ip TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX mail_requests_by_agent ON mail_requests (agent_id, created_at);

CREATE INDEX mail_requests_by_ip ON mail_requests (client_ip, created_at);

CREATE INDEX mail_requests_by_visitor ON mail_requests (visitor_id, created_at);

CREATE TABLE mcp_tokens (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    -- The first characters of the token, to recognise it in a list.
    token_prefix TEXT NOT NULL,
    feature_set TEXT NOT NULL,
    output_format TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at BIGINT
, modules TEXT);

CREATE INDEX mcp_tokens_by_agent ON mcp_tokens (agent_id, created_at);

CREATE TABLE memories (
    id TEXT PRIMARY KEY,
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    agent_id TEXT NOT NULL REFERENCES agents (id),
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    category TEXT,
    importance BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX memories_by_visitor ON memories (visitor_id, importance);

CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    blocks TEXT NOT NULL,
    status TEXT NOT NULL,
    client_message_id TEXT,
    reply_to TEXT,
    author TEXT,
    start_seq BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
, owner TEXT, agent_version BIGINT, author_id TEXT);

CREATE UNIQUE INDEX messages_by_client_id ON messages (client_message_id, conversation_id)
    WHERE client_message_id IS NOT NULL;

CREATE INDEX messages_by_conversation ON messages (conversation_id, created_at);

CREATE INDEX messages_by_updated ON messages (updated_at, id);

CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';

CREATE INDEX messages_streaming_by_owner ON messages (owner) WHERE status = 'streaming';

CREATE TABLE model_prices (
    model_prefix TEXT PRIMARY KEY,
    input_per_mtok DOUBLE PRECISION NOT NULL,
    cached_per_mtok DOUBLE PRECISION NOT NULL,
    output_per_mtok DOUBLE PRECISION NOT NULL,
    -- Tokens the model reads at most; compaction starts near it.
    context_window BIGINT NOT NULL,
    -- Whether the model accepts images.
    vision BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL
);

CREATE TABLE news_items (
    id TEXT PRIMARY KEY,
    agent_id TEXT REFERENCES agents (id),
    category TEXT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    published_on TEXT NOT NULL,
    source TEXT NOT NULL,
    url TEXT,
    created_at BIGINT NOT NULL
);

CREATE INDEX news_by_date ON news_items (published_on);

CREATE TABLE operator_notifications (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    note_id TEXT,
    actor_id TEXT,
    created_at BIGINT NOT NULL,
    read_at BIGINT
, digested_at BIGINT);

CREATE INDEX operator_notifications_by_conversation ON operator_notifications (conversation_id);

CREATE INDEX operator_notifications_by_user ON operator_notifications (user_id, read_at, created_at);

CREATE TABLE operator_notify_prefs (
    user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    kinds TEXT NOT NULL,
    in_console BIGINT NOT NULL DEFAULT 1,
    push BIGINT NOT NULL DEFAULT 1,
    digest BIGINT NOT NULL DEFAULT 0,
    digest_delay_min BIGINT NOT NULL DEFAULT 15,
    updated_at BIGINT NOT NULL
);

CREATE TABLE orders (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    visitor_id TEXT NOT NULL REFERENCES visitors (id),
    message_id TEXT NOT NULL,
    service_type TEXT NOT NULL,
    category TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    method TEXT NOT NULL,
    status TEXT NOT NULL,
    provider TEXT NOT NULL,
    pay_url TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    paid_at BIGINT,
    updated_at BIGINT NOT NULL
, facts TEXT);

CREATE INDEX orders_by_agent ON orders (agent_id, created_at);

CREATE INDEX orders_by_time ON orders (created_at);

CREATE INDEX orders_by_visitor ON orders (visitor_id, created_at);

CREATE INDEX orders_pending ON orders (expires_at) WHERE status = 'pending';

CREATE TABLE payment_keys (
    name TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE payment_webhooks (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL,
    received_at BIGINT NOT NULL
);

CREATE INDEX payment_webhooks_by_time ON payment_webhooks (received_at);

CREATE TABLE processes (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);

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

CREATE INDEX push_deliveries_by_subscription ON push_deliveries (subscription_id);

CREATE INDEX push_deliveries_due ON push_deliveries (status, next_attempt_at);

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

CREATE TABLE ratings (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    -- The rated answer; '' for a rating of the whole conversation.
    message_id TEXT NOT NULL,
    score BIGINT NOT NULL,
    comment TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX ratings_by_agent ON ratings (agent_id, updated_at);

CREATE INDEX ratings_by_updated ON ratings (updated_at);

CREATE UNIQUE INDEX ratings_one_per_target ON ratings (conversation_id, message_id);

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

CREATE INDEX report_conversations_by_agent ON report_conversations (agent_id, created_at);

CREATE INDEX report_conversations_by_created ON report_conversations (created_at, agent_id, team_id, version,
    person_id, messages, answered, closed, last_activity_at, unreplied_since, handed_over_at, handover_reason,
    rated_down, thumbs_up, thumbs_down, csat, spend_usd);

CREATE INDEX report_conversations_handed ON report_conversations (created_at, handed_over_at, first_response_at,
    first_response_by, first_response_business_ms, closed_by_person_at, resolution_business_ms, version, agent_id,
    team_id) WHERE handed_over_at IS NOT NULL;

CREATE INDEX report_conversations_people ON report_conversations (created_at, person_id, version, agent_id, team_id);

CREATE TABLE report_handlers (
    conversation_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    first_at BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, user_id)
);

CREATE INDEX report_handlers_by_user ON report_handlers (user_id, conversation_id);

CREATE TABLE report_refresh (
    id BIGINT PRIMARY KEY,
    upto BIGINT NOT NULL
);

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

CREATE TABLE saved_replies (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    -- What the operator types after `/` (lower case letters, digits, `-` and `_`).
    shortcut TEXT NOT NULL,
    body TEXT NOT NULL,
    created_by TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX saved_replies_by_shortcut ON saved_replies (agent_id, shortcut);

CREATE TABLE search_cursors (
    source TEXT PRIMARY KEY,
    at BIGINT NOT NULL,
    id TEXT NOT NULL
);

CREATE TABLE search_docs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    body TEXT NOT NULL,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX search_docs_by_conversation ON search_docs (conversation_id, created_at);

CREATE TABLE search_terms (
    term TEXT NOT NULL,
    doc_id TEXT NOT NULL REFERENCES search_docs (id) ON DELETE CASCADE,
    PRIMARY KEY (term, doc_id)
);

CREATE INDEX search_terms_by_doc ON search_terms (doc_id);

CREATE TABLE secret_key_check (
    id BIGINT PRIMARY KEY,
    sealed TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expiry BIGINT NOT NULL
);

CREATE INDEX sessions_by_expiry ON sessions (expiry);

CREATE TABLE source_pages (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES knowledge_sources (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    run_id TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    depth BIGINT NOT NULL DEFAULT 0,
    title TEXT,
    lang TEXT,
    etag TEXT,
    last_modified TEXT,
    content_hash TEXT,
    bytes BIGINT,
    article_id TEXT,
    fetched_at BIGINT,
    updated_at BIGINT NOT NULL
);

CREATE INDEX source_pages_by_hash ON source_pages (source_id, content_hash);

CREATE INDEX source_pages_by_run ON source_pages (run_id, status);

CREATE UNIQUE INDEX source_pages_by_url ON source_pages (source_id, url);

CREATE TABLE source_runs (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES knowledge_sources (id) ON DELETE CASCADE,
    state TEXT NOT NULL,
    owner TEXT,
    reason TEXT,
    current_url TEXT,
    found BIGINT NOT NULL DEFAULT 0,
    fetched BIGINT NOT NULL DEFAULT 0,
    indexed BIGINT NOT NULL DEFAULT 0,
    unchanged BIGINT NOT NULL DEFAULT 0,
    skipped BIGINT NOT NULL DEFAULT 0,
    failed BIGINT NOT NULL DEFAULT 0,
    retired BIGINT NOT NULL DEFAULT 0,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    finished_at BIGINT
);

CREATE INDEX source_runs_by_source ON source_runs (source_id, started_at);

CREATE INDEX source_runs_by_state ON source_runs (state);

CREATE TABLE spend_days (
    spender TEXT NOT NULL,
    day BIGINT NOT NULL,
    spent DOUBLE PRECISION NOT NULL,
    held DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (spender, day)
);

CREATE TABLE team_agents (
    agent_id TEXT PRIMARY KEY REFERENCES agents (id),
    team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE
);

CREATE INDEX team_agents_by_team ON team_agents (team_id);

CREATE TABLE team_members (
    team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    last_assigned_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (team_id, user_id)
);

CREATE INDEX team_members_by_user ON team_members (user_id);

CREATE TABLE teams (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    assign_mode TEXT NOT NULL DEFAULT 'manual',
    assign_seq BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX teams_by_name ON teams (name);

CREATE TABLE tool_calls (
    id TEXT PRIMARY KEY,
    message_id TEXT NOT NULL REFERENCES messages (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    call_id TEXT NOT NULL,
    hop BIGINT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT,
    status TEXT NOT NULL,
    error TEXT,
    duration_ms BIGINT,
    created_at BIGINT NOT NULL
, parent_call_id TEXT);

CREATE INDEX tool_calls_by_conversation ON tool_calls (conversation_id);

CREATE INDEX tool_calls_by_message ON tool_calls (message_id);

CREATE INDEX tool_calls_by_time ON tool_calls (created_at);

CREATE TABLE usage_ledger (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    conversation_id TEXT,
    message_id TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    outcome TEXT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cached_tokens BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    latency_ms BIGINT NOT NULL,
    created_at BIGINT NOT NULL
, visitor_id TEXT, estimated BIGINT NOT NULL DEFAULT 0);

CREATE INDEX usage_by_agent ON usage_ledger (agent_id, created_at);

CREATE INDEX usage_by_conversation ON usage_ledger (conversation_id);

CREATE INDEX usage_by_time ON usage_ledger (created_at, agent_id, model, conversation_id, cost_usd);

CREATE INDEX usage_by_visitor ON usage_ledger (visitor_id, created_at);

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    -- `admin` or `operator`.
    role TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_login_at BIGINT
, away BIGINT NOT NULL DEFAULT 0, last_seen_at BIGINT, notify_events TEXT NOT NULL DEFAULT '', sessions_after BIGINT NOT NULL DEFAULT 0, max_open BIGINT NOT NULL DEFAULT 5, last_assigned_at BIGINT NOT NULL DEFAULT 0);

CREATE TABLE vapid_keys (
    id TEXT PRIMARY KEY,
    public_key TEXT NOT NULL,
    private_key TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE visitors (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    token_hash TEXT NOT NULL UNIQUE,
    host_origin TEXT,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
, revoked_at BIGINT, acts_as TEXT, contact_name TEXT, contact_email TEXT, contact_phone TEXT, contact_at BIGINT, attributes TEXT, user_agent TEXT, language TEXT, country TEXT, merged_into TEXT, merged_at BIGINT);

CREATE INDEX visitors_by_acts_as ON visitors (acts_as);

CREATE INDEX visitors_by_agent_seen ON visitors (agent_id, last_seen_at);

CREATE INDEX visitors_by_contact_at ON visitors (contact_at);

CREATE INDEX visitors_by_merged_into ON visitors (merged_into);

CREATE TABLE webhook_attempts (
    id TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
    at BIGINT NOT NULL,
    status BIGINT,
    error TEXT,
    duration_ms BIGINT NOT NULL
);

CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, at);

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

CREATE INDEX webhook_deliveries_by_conversation ON webhook_deliveries (conversation_id);

CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);

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
