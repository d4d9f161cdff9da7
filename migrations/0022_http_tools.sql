-- Tools an owner defines in the console (issue 18): Parley calls the owner's HTTPS endpoint with
-- the model's validated arguments. They join the built-in tools in the registry, gated by their
-- capability like any other.
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
