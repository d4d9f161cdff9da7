-- The team inbox (issue 43): teams and assignment, private notes, labels, operators' notifications.
-- `assign_mode`: `manual` or `auto`. `assign_seq` is bumped by each automatic assignment: the row
-- lock that runs a team's assignments one at a time across replicas (SQLite has one writer anyway).
CREATE TABLE teams (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    assign_mode TEXT NOT NULL DEFAULT 'manual',
    assign_seq BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX teams_by_name ON teams (name);

-- `last_assigned_at`: when the member last got one of the team's conversations (round-robin order).
CREATE TABLE team_members (
    team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    last_assigned_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_by_user ON team_members (user_id);

-- The agents a team handles (an agent: one team at most).
CREATE TABLE team_agents (
    agent_id TEXT PRIMARY KEY REFERENCES agents (id),
    team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE
);
CREATE INDEX team_agents_by_team ON team_agents (team_id);

-- Whose the conversation is (no foreign keys, as `claimed_by`): the team its agent routed it
-- to, the person it is assigned to.
ALTER TABLE conversations ADD COLUMN team_id TEXT;
ALTER TABLE conversations ADD COLUMN assignee_id TEXT;
ALTER TABLE conversations ADD COLUMN assigned_at BIGINT;
CREATE INDEX conversations_by_assignee ON conversations (assignee_id, status);
CREATE INDEX conversations_by_team ON conversations (team_id, status);

-- Most open conversations automatic assignment gives a user; `last_assigned_at` is the row that
-- every automatic assignment to the user locks (across teams).
ALTER TABLE users ADD COLUMN max_open BIGINT NOT NULL DEFAULT 5;
ALTER TABLE users ADD COLUMN last_assigned_at BIGINT NOT NULL DEFAULT 0;

-- Private notes: operators only; never a message, an event, model context, MCP or a webhook.
-- `mentions`: the mentioned users, `,id,id,` (LIKE-searchable on both databases).
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

-- Owner-defined labels. `name_key`: the name trimmed and lower-cased (unique without an
-- expression index); `color`: `#rrggbb`.
CREATE TABLE labels (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    color TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX labels_by_key ON labels (name_key);

CREATE TABLE conversation_labels (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    label_id TEXT NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    added_by TEXT,
    added_at BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, label_id)
);
CREATE INDEX conversation_labels_by_label ON conversation_labels (label_id, conversation_id);

-- What an operator is told of (the console now; push and digest later): ids only, never text.
-- `kind`: `assigned`, `mention`, `team_queue`, `visitor_reply`.
CREATE TABLE operator_notifications (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    note_id TEXT,
    actor_id TEXT,
    created_at BIGINT NOT NULL,
    read_at BIGINT
);
CREATE INDEX operator_notifications_by_user ON operator_notifications (user_id, read_at, created_at);
CREATE INDEX operator_notifications_by_conversation ON operator_notifications (conversation_id);
