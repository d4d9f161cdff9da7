-- Answer tests (issue 45, part 2). A trial conversation is one the console starts to try an agent
-- (a test case, the draft's preview): it runs the real turn but is left out of the inbox, search,
-- contacts, webhooks, mail and operator notifications, and its payments go to the sandbox.
ALTER TABLE conversations ADD COLUMN trial BIGINT NOT NULL DEFAULT 0;

-- An agent's test cases: the visitor's turns (a JSON array of messages) and the checks its last
-- answer must pass (a JSON array; see engine/answer_tests).
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

-- One run of an agent's tests against its published version or its draft. `status`: running,
-- cancelling, done, cancelled, failed; a running run whose process is gone reads as interrupted.
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

-- A case's result in a run: what the agent answered, the tools it called, the sources it cited,
-- cost and time, and each check's outcome (JSON). The case's name and turns are copied so that a
-- result still reads after the case was edited or deleted.
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
