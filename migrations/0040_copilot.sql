-- The operator's copilot (issue 43, part 7): the summary written for the person a conversation
-- is handed to, shown at the top of its page. Apart from `summary` (the model's own compaction of
-- older turns, part of its context): this one is for people and never reaches the model.
ALTER TABLE conversations ADD COLUMN handoff_summary TEXT;
-- Which model wrote it (`demo` marks the offline demo model's extract) and when (ms).
ALTER TABLE conversations ADD COLUMN handoff_summary_model TEXT;
ALTER TABLE conversations ADD COLUMN handoff_summary_at BIGINT;
