-- An agent's `max_tokens` for every model call of its answers (seed 003: 4,096). NULL: the
-- server's default (PARLEY_ANSWER_MAX_TOKENS, 4,096).
ALTER TABLE agents ADD COLUMN max_tokens BIGINT;
