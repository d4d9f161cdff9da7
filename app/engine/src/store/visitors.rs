//! Visitors: people chatting in a widget, known by a bearer token the panel keeps. Only a
//! SHA-256 hash of the token is stored. A token of an identified user's browser stands for the
//! user's visitor row (see [`super::identity`]).

use sha2::{Digest, Sha256};

use super::{Db, DbError, new_id};

crate::store::row_struct! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Visitor {
        /// The visitor whose data this token reaches: the token's own row, or the user's row for a
        /// browser of an identified user.
        pub id: String,
        /// The token's own row (its use, its revocation).
        pub token_id: String,
        pub agent_id: String,
        pub host_origin: Option<String>,
        /// When the token was last used (moved forward at most once a minute).
        pub last_seen_at: i64,
        /// When the token was revoked; a revoked token is refused.
        pub revoked_at: Option<i64>,
        /// The host site's user, when the visitor is identified: their id (`sub`), name and email.
        pub user_subject: Option<String>,
        pub user_name: Option<String>,
        pub user_email: Option<String>,
    }
}

impl Visitor {
    /// Identified by the host site.
    pub fn is_identified(&self) -> bool {
        self.user_subject.is_some()
    }
}

/// What a browser's first request said about it (issue 43, part 5; see
/// `engine::contacts::client_facts`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientFacts {
    pub user_agent: Option<String>,
    pub language: Option<String>,
    pub country: Option<String>,
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

/// Stores a new token row (standing for `acts_as` when given) with `executor` (the writer, or a
/// transaction); returns its id.
pub(super) async fn insert<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::Any>,
    agent_id: &str,
    token: &str,
    host_origin: Option<&str>,
    acts_as: Option<&str>,
    client: &ClientFacts,
    now: i64,
) -> Result<String, DbError> {
    let id = new_id();
    sqlx::query(
        "INSERT INTO visitors (id, agent_id, token_hash, host_origin, created_at, last_seen_at, acts_as, user_agent, \
         language, country) VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9)",
    )
    .bind(&id)
    .bind(agent_id)
    .bind(hash_token(token))
    .bind(host_origin)
    .bind(now)
    .bind(acts_as)
    .bind(&client.user_agent)
    .bind(&client.language)
    .bind(&client.country)
    .execute(executor)
    .await?;
    Ok(id)
}

pub async fn create(
    db: &Db,
    agent_id: &str,
    token: &str,
    host_origin: Option<&str>,
    client: &ClientFacts,
    now: i64,
) -> Result<Visitor, DbError> {
    let id = insert(db.writer(), agent_id, token, host_origin, None, client, now).await?;
    Ok(Visitor {
        token_id: id.clone(),
        id,
        agent_id: agent_id.to_owned(),
        host_origin: host_origin.map(str::to_owned),
        last_seen_at: now,
        revoked_at: None,
        user_subject: None,
        user_name: None,
        user_email: None,
    })
}

/// A new token row for a browser that stands for the visitor `acts_as` (a return link followed:
/// the conversation is theirs); its id.
pub async fn create_acting(
    db: &Db,
    agent_id: &str,
    token: &str,
    acts_as: &str,
    client: &ClientFacts,
    now: i64,
) -> Result<String, DbError> {
    insert(db.writer(), agent_id, token, None, Some(acts_as), client, now).await
}

pub async fn by_token(db: &Db, token: &str) -> Result<Option<Visitor>, DbError> {
    sqlx::query_as(
        "SELECT COALESCE(v.acts_as, v.id) AS id, v.id AS token_id, v.agent_id, v.host_origin, v.last_seen_at, \
         v.revoked_at, u.subject AS user_subject, u.name AS user_name, u.email AS user_email \
         FROM visitors v LEFT JOIN end_users u ON u.visitor_id = COALESCE(v.acts_as, v.id) WHERE v.token_hash = $1",
    )
    .bind(hash_token(token))
    .fetch_optional(&mut *db.read().await?)
    .await
}

/// The visitor row `id` itself (with its user, when identified): who a visitor's mail speaks for.
pub async fn by_id(db: &Db, id: &str) -> Result<Option<Visitor>, DbError> {
    sqlx::query_as(
        "SELECT v.id, v.id AS token_id, v.agent_id, v.host_origin, v.last_seen_at, v.revoked_at, \
         u.subject AS user_subject, u.name AS user_name, u.email AS user_email \
         FROM visitors v LEFT JOIN end_users u ON u.visitor_id = v.id WHERE v.id = $1",
    )
    .bind(id)
    .fetch_optional(&mut *db.read().await?)
    .await
}

/// The visitor row whose data the token row `id` reaches (itself, or its user's row).
pub async fn person_of(db: &Db, id: &str) -> Result<Option<String>, DbError> {
    let row: Option<(String,)> = sqlx::query_as("SELECT COALESCE(acts_as, id) FROM visitors WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.map(|(id,)| id))
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

/// Revokes a visitor's tokens (an identified user's: on every browser); `false` when there is no
/// such visitor or it was revoked already.
pub async fn revoke(db: &Db, id: &str, now: i64) -> Result<bool, DbError> {
    let done =
        sqlx::query("UPDATE visitors SET revoked_at = $2 WHERE (id = $1 OR acts_as = $1) AND revoked_at IS NULL")
            .bind(id)
            .bind(now)
            .execute(db.writer())
            .await?;
    Ok(done.rows_affected() >= 1)
}

/// Revokes one browser's token only (a sign-out); the data it reached stays.
pub async fn revoke_token(db: &Db, token_id: &str, now: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE visitors SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
        .bind(token_id)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(())
}
