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
    Ok(Visitor { id, agent_id: agent_id.to_owned(), host_origin: host_origin.map(str::to_owned) })
}

pub async fn by_token(db: &Db, token: &str) -> Result<Option<Visitor>, DbError> {
    sqlx::query_as("SELECT id, agent_id, host_origin FROM visitors WHERE token_hash = $1")
        .bind(hash_token(token))
        .fetch_optional(&mut *db.read().await?)
        .await
}
