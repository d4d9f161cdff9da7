//! Visitors: anonymous people chatting in a widget, known by a bearer token the panel keeps.
//! Only a SHA-256 hash of the token is stored.

use sha2::{Digest, Sha256};
use sqlx::FromRow;

use super::{Db, DbError, new_id};

#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Visitor {
    pub id: String,
    pub agent_id: String,
    pub host_origin: Option<String>,
    /// When the token was last used (moved forward at most once a minute).
    pub last_seen_at: i64,
    /// When the token was revoked; a revoked token is refused.
    pub revoked_at: Option<i64>,
}

/// A new random visitor token (`pv_` + 43 characters of base64url).
pub fn new_token() -> String {
    use base64::Engine;
    let bytes: [u8; 32] = rand::random();
    format!("pv_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The stored form of a token.
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub async fn create(
    db: &Db,
    agent_id: &str,
    token: &str,
    host_origin: Option<&str>,
    now: i64,
) -> Result<Visitor, DbError> {
    let id = new_id();
    sqlx::query(
        "INSERT INTO visitors (id, agent_id, token_hash, host_origin, created_at, last_seen_at) \
         VALUES ($1, $2, $3, $4, $5, $5)",
    )
    .bind(&id)
    .bind(agent_id)
    .bind(hash_token(token))
    .bind(host_origin)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(Visitor {
        id,
        agent_id: agent_id.to_owned(),
        host_origin: host_origin.map(str::to_owned),
        last_seen_at: now,
        revoked_at: None,
    })
}

pub async fn by_token(db: &Db, token: &str) -> Result<Option<Visitor>, DbError> {
    sqlx::query_as("SELECT id, agent_id, host_origin, last_seen_at, revoked_at FROM visitors WHERE token_hash = $1")
        .bind(hash_token(token))
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// Marks the token as used at `now`.
pub async fn touch(db: &Db, id: &str, now: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE visitors SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $2")
        .bind(id)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Revokes a visitor's token; `false` when there is no such visitor or it was revoked already.
pub async fn revoke(db: &Db, id: &str, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query("UPDATE visitors SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
        .bind(id)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected() == 1)
}
