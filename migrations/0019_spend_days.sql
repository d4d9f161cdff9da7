-- Carry the load (issue 14): today's spend of each agent and visitor, shared by every replica on
-- one PostgreSQL, so that a daily cap holds across processes. `spent` starts from the usage
-- ledger when the row is made and grows in the same transaction as each ledger row; `held` is
-- the room taken by calls under way (their expected cost), taken and released with conditional
-- updates. One process on SQLite keeps these figures in memory and leaves this table empty.

CREATE TABLE spend_days (
    spender TEXT NOT NULL,
    day BIGINT NOT NULL,
    spent DOUBLE PRECISION NOT NULL,
    held DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (spender, day)
);
