-- Entitlements of an MCP token (seed 004: a customer gets the modules they bought): the modules
-- it may use, comma-separated, of `knowledge`, `news`, `trending` and `tools` (the agent's other
-- tools). NULL: every module of its agent.
ALTER TABLE mcp_tokens ADD COLUMN modules TEXT;
