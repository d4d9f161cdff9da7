-- Spend always bounded (issue 12): a visitor's spend per day across conversations, and usage
-- estimated from the text when a provider reports none.

-- The visitor whose conversation the call served (NULL: not a visitor's call, e.g. MCP).
ALTER TABLE usage_ledger ADD COLUMN visitor_id TEXT;
-- 1: the provider sent no usage; the token counts are estimated from the text.
ALTER TABLE usage_ledger ADD COLUMN estimated BIGINT NOT NULL DEFAULT 0;
CREATE INDEX usage_by_visitor ON usage_ledger (visitor_id, created_at);

-- The offline demo model is free; every other model without a row is charged a default price.
INSERT INTO model_prices VALUES ('parley-demo', 0, 0, 0, 128000, 1, 0) ON CONFLICT (model_prefix) DO NOTHING;
