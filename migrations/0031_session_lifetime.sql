-- Console sessions (issue 41): a session started before this moment (ms) is over. Set when the
-- user's password changes, so that every other signed-in browser is signed out.
ALTER TABLE users ADD COLUMN sessions_after BIGINT NOT NULL DEFAULT 0;
