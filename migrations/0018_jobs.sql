-- Carry the load (issue 14): periodic jobs run once across replicas, not once per process. Each
-- job has a row; a process runs a job only after moving its `next_run_at` forward in one
-- conditional UPDATE, which exactly one replica can do for each due run.

CREATE TABLE jobs (
    name TEXT PRIMARY KEY,
    next_run_at BIGINT NOT NULL,
    last_run_by TEXT,
    last_run_at BIGINT
);
