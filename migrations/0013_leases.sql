-- Nothing lost (issue 13): each running server process holds a lease it renews (its heartbeat);
-- an answer being written records the process writing it, so crash recovery only touches the
-- answers of a process that is gone (its lease expired), never another live replica's.

CREATE TABLE processes (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);

-- The process writing a `streaming` answer (NULL: written before leases existed).
ALTER TABLE messages ADD COLUMN owner TEXT;
CREATE INDEX messages_streaming_by_owner ON messages (owner) WHERE status = 'streaming';
