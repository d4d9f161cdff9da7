//! What keeps transcript mail from being a relay (issue 41): the addresses a visitor confirmed
//! with a mailed code, and a ledger of the mails visitors caused (codes and transcripts), counted
//! per visitor, per address group and per agent.

use sha2::{Digest, Sha256};

use super::{Db, DbError, new_id};

/// How long a mailed code works.
pub const CODE_TTL_MS: i64 = 15 * 60_000;
/// Wrong codes allowed for one mailed code; then a new one must be asked for.
pub const CODE_ATTEMPTS: i64 = 5;

/// A code as stored: bound to the visitor and the address, so a row copied elsewhere is useless.
fn code_hash(visitor_id: &str, address: &str, code: &str) -> String {
    let mut h = Sha256::new();
    for part in [visitor_id, address, code.trim()] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

/// Whether the visitor confirmed `address`.
pub async fn is_confirmed(db: &Db, visitor_id: &str, address: &str) -> Result<bool, DbError> {
    let at: Option<Option<i64>> =
        sqlx::query_scalar("SELECT confirmed_at FROM mail_confirmations WHERE visitor_id = $1 AND address = $2")
            .bind(visitor_id)
            .bind(address)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    Ok(at.flatten().is_some())
}

/// Stores a new code for (`visitor_id`, `address`), replacing an unconfirmed one.
pub async fn set_code(db: &Db, visitor_id: &str, address: &str, code: &str, now: i64) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO mail_confirmations (visitor_id, address, code_hash, attempts, expires_at, created_at) \
         VALUES ($1, $2, $3, 0, $4, $5) ON CONFLICT (visitor_id, address) DO UPDATE SET \
         code_hash = excluded.code_hash, attempts = 0, expires_at = excluded.expires_at",
    )
    .bind(visitor_id)
    .bind(address)
    .bind(code_hash(visitor_id, address, code))
    .bind(now + CODE_TTL_MS)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// What a code typed by the visitor did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeCheck {
    Confirmed,
    /// Wrong, expired, used up, or none was mailed.
    Refused,
}

/// Checks `code` for (`visitor_id`, `address`): right, unexpired and within
/// [`CODE_ATTEMPTS`] confirms the address; every try counts (one statement, so tries at the same
/// moment cannot pass the count).
pub async fn check_code(db: &Db, visitor_id: &str, address: &str, code: &str, now: i64) -> Result<CodeCheck, DbError> {
    let hash = code_hash(visitor_id, address, code);
    let row: Option<(Option<i64>,)> = sqlx::query_as(
        "UPDATE mail_confirmations SET attempts = attempts + 1, \
         confirmed_at = CASE WHEN code_hash = $3 AND expires_at > $4 AND attempts < $5 THEN $4 ELSE confirmed_at END \
         WHERE visitor_id = $1 AND address = $2 AND confirmed_at IS NULL RETURNING confirmed_at",
    )
    .bind(visitor_id)
    .bind(address)
    .bind(hash)
    .bind(now)
    .bind(CODE_ATTEMPTS)
    .fetch_optional(db.writer())
    .await?;
    Ok(match row {
        Some((Some(_),)) => CodeCheck::Confirmed,
        _ => CodeCheck::Refused,
    })
}

/// One mail a visitor caused, for the daily counts.
pub async fn record_request(
    db: &Db,
    visitor_id: &str,
    client_ip: &str,
    agent_id: &str,
    kind: &str,
    now: i64,
) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO mail_requests (id, visitor_id, client_ip, agent_id, kind, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(new_id())
    .bind(visitor_id)
    .bind(client_ip)
    .bind(agent_id)
    .bind(kind)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// Mails caused since `since` by the visitor, from the address group, and for the agent (one
/// query).
pub async fn counts_since(
    db: &Db,
    visitor_id: &str,
    client_ip: &str,
    agent_id: &str,
    since: i64,
) -> Result<(i64, i64, i64), DbError> {
    let (visitor, ip, agent): (Option<i64>, Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT CAST(SUM(CASE WHEN visitor_id = $1 THEN 1 ELSE 0 END) AS BIGINT), \
         CAST(SUM(CASE WHEN client_ip = $2 THEN 1 ELSE 0 END) AS BIGINT), \
         CAST(SUM(CASE WHEN agent_id = $3 THEN 1 ELSE 0 END) AS BIGINT) \
         FROM mail_requests WHERE created_at >= $4 AND (visitor_id = $1 OR client_ip = $2 OR agent_id = $3)",
    )
    .bind(visitor_id)
    .bind(client_ip)
    .bind(agent_id)
    .bind(since)
    .fetch_one(&mut *db.read().await?)
    .await?;
    Ok((visitor.unwrap_or(0), ip.unwrap_or(0), agent.unwrap_or(0)))
}

/// Forgets requests older than `before` and codes that expired unconfirmed; how many rows.
pub async fn prune(db: &Db, before: i64, now: i64) -> Result<u64, DbError> {
    let a = sqlx::query("DELETE FROM mail_requests WHERE created_at < $1").bind(before).execute(db.writer()).await?;
    let b = sqlx::query("DELETE FROM mail_confirmations WHERE confirmed_at IS NULL AND expires_at < $1")
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(a.rows_affected() + b.rows_affected())
}
