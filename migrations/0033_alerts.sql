-- What administrators must hear of at once (issue 41): an agent's daily spending cap reached, a
-- provider's quota or balance exhausted. One row per agent, kind and UTC day: the mail and the
-- webhook event go out once a day, however many calls are refused.
CREATE TABLE alerts (
    agent_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    day BIGINT NOT NULL,
    detail TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, kind, day)
);
CREATE INDEX alerts_by_time ON alerts (created_at);
