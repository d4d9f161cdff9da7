-- The tool calls an expert makes for its coordinator (seed 003): recorded under the coordinator's
-- `invoke_<expert>` call, whose `call_id` they name. NULL: a call of the answer's own model.
ALTER TABLE tool_calls ADD COLUMN parent_call_id TEXT;
