-- Compaction: older turns of a long conversation summarised by the model. The messages stay;
-- the model reads the summary instead of the messages up to `summary_until` (created_at, ms).
ALTER TABLE conversations ADD COLUMN summary TEXT;
ALTER TABLE conversations ADD COLUMN summary_until BIGINT;
