-- Credentials (issue 12). Provider keys in `agents.api_key` are sealed with the secret key
-- (`enc:v1:` + base64 of nonce and AES-256-GCM ciphertext; the code seals plain keys at start).
-- This one row, sealed with the same key, lets a start with a wrong key fail before anything
-- is read or written.
CREATE TABLE secret_key_check (
    id BIGINT PRIMARY KEY,
    sealed TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- A visitor token stops working when revoked (`last_seen_at`, from 0001, gives the idle expiry).
ALTER TABLE visitors ADD COLUMN revoked_at BIGINT;
