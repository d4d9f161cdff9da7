-- Coordinator agents and their guards (seed 003).

-- Tool hops per turn; NULL: 3 for help-center agents, 15 for coordinators (capability `expert_team`).
ALTER TABLE agents ADD COLUMN max_turns BIGINT;
-- What one agent may spend per UTC day, in US dollars; NULL: no cap.
ALTER TABLE agents ADD COLUMN daily_cap_usd DOUBLE PRECISION;

-- Model prices in US dollars per million tokens, matched by the longest model-name prefix
-- (a provider prefix such as `openai/` is ignored). Editable in the console.
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
INSERT INTO model_prices VALUES ('gpt-4o-mini', 0.15, 0.075, 0.60, 128000, 1, 0);
INSERT INTO model_prices VALUES ('gpt-4o', 2.50, 1.25, 10.0, 128000, 1, 0);
INSERT INTO model_prices VALUES ('gpt-4.1-mini', 0.40, 0.10, 1.60, 1047576, 1, 0);
INSERT INTO model_prices VALUES ('gpt-4.1-nano', 0.10, 0.025, 0.40, 1047576, 1, 0);
INSERT INTO model_prices VALUES ('gpt-4.1', 2.00, 0.50, 8.00, 1047576, 1, 0);
INSERT INTO model_prices VALUES ('claude-3-5-haiku', 0.80, 0.08, 4.00, 200000, 1, 0);
INSERT INTO model_prices VALUES ('claude-haiku', 0.80, 0.08, 4.00, 200000, 1, 0);
INSERT INTO model_prices VALUES ('claude-3-5-sonnet', 3.00, 0.30, 15.0, 200000, 1, 0);
INSERT INTO model_prices VALUES ('claude-sonnet', 3.00, 0.30, 15.0, 200000, 1, 0);

-- The coordinator's last reported consulting state (JSON), shown in the console.
ALTER TABLE conversations ADD COLUMN consulting_state TEXT;
