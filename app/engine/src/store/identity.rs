//! Known visitors (issue 16): an agent's identity secrets, the host site's users, and linking a
//! browser's visitor token to a user.
//!
//! A user's conversations, memories, leads, orders and images live on one visitor row, the user's
//! (`end_users.visitor_id`). Every browser the user signs in on keeps its own token row, which
//! then stands for the user's row (`visitors.acts_as`): everything that checks ownership by
//! visitor id works unchanged, on every device. What a browser had before it was identified
//! becomes the user's only when that browser creates the user (its row becomes the user's);
//! nothing is merged into an existing account (issue 41: a copied token must not plant data).

use super::visitors::{ClientFacts, insert, new_token};
use super::{Db, DbError, new_id};

crate::store::row_struct! {
    /// An identity secret as listed (never the secret itself).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SecretInfo {
        pub id: String,
        pub prefix: String,
        pub created_at: i64,
        /// `None`: the current secret; otherwise accepted until then.
        pub expires_at: Option<i64>,
    }
}

/// A new random identity secret (`pis_` + 43 characters of base64url, 256 bits).
pub fn new_secret() -> String {
    use base64::Engine;
    let bytes: [u8; 32] = rand::random();
    format!("pis_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

fn no_secret_key() -> DbError {
    DbError::Configuration("no secret key to seal or open identity secrets (see PARLEY_SECRET_KEY)".into())
}

/// Makes a new current secret for the agent; the one it replaces stays valid `grace_ms` more.
/// Returns the new secret's row and the secret (shown once).
pub async fn rotate_secret(db: &Db, agent_id: &str, grace_ms: i64, now: i64) -> Result<(SecretInfo, String), DbError> {
    let secret = new_secret();
    let info =
        SecretInfo { id: new_id(), prefix: secret.chars().take(10).collect(), created_at: now, expires_at: None };
    let sealed = db.secrets().ok_or_else(no_secret_key)?.seal(&secret, secret_place(&info.id));
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE identity_secrets SET expires_at = $2 WHERE agent_id = $1 AND expires_at IS NULL")
        .bind(agent_id)
        .bind(now.saturating_add(grace_ms.max(0)))
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO identity_secrets (id, agent_id, secret, prefix, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, NULL)",
    )
    .bind(&info.id)
    .bind(agent_id)
    .bind(&sealed)
    .bind(&info.prefix)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok((info, secret))
}

/// The agent's secrets, newest first (current and still-accepted ones, then expired ones).
pub async fn list_secrets(db: &Db, agent_id: &str) -> Result<Vec<SecretInfo>, DbError> {
    sqlx::query_as(
        "SELECT id, prefix, created_at, expires_at FROM identity_secrets WHERE agent_id = $1 \
         ORDER BY created_at DESC, id DESC",
    )
    .bind(agent_id)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// The secrets that verify a token at `now`, opened, the current one first.
pub async fn valid_secrets(db: &Db, agent_id: &str, now: i64) -> Result<Vec<String>, DbError> {
    let sealed: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, secret FROM identity_secrets WHERE agent_id = $1 AND (expires_at IS NULL OR expires_at > $2) \
         ORDER BY created_at DESC, id DESC",
    )
    .bind(agent_id)
    .bind(now)
    .fetch_all(&mut *db.read().await?)
    .await?;
    let secrets = db.secrets().ok_or_else(no_secret_key)?;
    sealed
        .into_iter()
        .map(|(id, s)| secrets.open(&s, secret_place(&id)).map_err(|e| DbError::Decode(Box::new(e))))
        .collect()
}

/// Where an identity secret is sealed to.
pub(crate) fn secret_place(id: &str) -> crate::secret::Place<'_> {
    crate::secret::Place::new("identity_secrets", "secret", id)
}

crate::store::row_struct! {
    /// A user of the host site, as an agent knows them.
    #[derive(Clone, Debug, PartialEq, serde::Serialize)]
    pub struct EndUser {
        pub id: String,
        pub agent_id: String,
        /// The host site's user id (the token's `sub`).
        pub subject: String,
        pub name: Option<String>,
        pub email: Option<String>,
        /// The visitor row holding the user's data.
        pub visitor_id: String,
        pub created_at: i64,
        pub last_seen_at: i64,
    }
}

const USER_COLUMNS: &str = "id, agent_id, subject, name, email, visitor_id, created_at, last_seen_at";

/// The user whose data a visitor row holds.
pub async fn user_of_visitor(db: &Db, visitor_id: &str) -> Result<Option<EndUser>, DbError> {
    let sql = format!("SELECT {USER_COLUMNS} FROM end_users WHERE visitor_id = $1");
    sqlx::query_as(&sql).bind(visitor_id).fetch_optional(&mut *db.read().await?).await
}

/// An agent's user by the host site's id.
pub async fn user_by_subject(db: &Db, agent_id: &str, subject: &str) -> Result<Option<EndUser>, DbError> {
    let sql = format!("SELECT {USER_COLUMNS} FROM end_users WHERE agent_id = $1 AND subject = $2");
    sqlx::query_as(&sql).bind(agent_id).bind(subject).fetch_optional(&mut *db.read().await?).await
}

/// What the host site says about its user (from a verified token).
#[derive(Clone, Debug, PartialEq)]
pub struct Claimed {
    pub subject: String,
    pub name: Option<String>,
    pub email: Option<String>,
}

/// What linking a browser to a user did.
#[derive(Clone, Debug, PartialEq)]
pub struct Linked {
    pub user: EndUser,
    /// A new token for the browser, when its old one belonged to another user (their data stays
    /// theirs; the browser starts afresh as this user).
    pub new_token: Option<String>,
}

/// Records a token's `jti` for an agent until `expires_at` (ms): `false` when it was used
/// already. Expired ones are swept on the way.
pub async fn use_jti(db: &Db, agent_id: &str, jti: &str, expires_at: i64, now: i64) -> Result<bool, DbError> {
    sqlx::query("DELETE FROM identity_jtis WHERE expires_at < $1").bind(now).execute(db.writer()).await?;
    let done = sqlx::query(
        "INSERT INTO identity_jtis (agent_id, jti, expires_at) VALUES ($1, $2, $3) ON CONFLICT (agent_id, jti) DO NOTHING",
    )
    .bind(agent_id)
    .bind(jti)
    .bind(expires_at)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Links the browser holding the token row `token_row` (standing for the visitor `person`) to
/// the user `claimed` of the agent, in one transaction:
/// - the browser already is this user's: their name and email are refreshed;
/// - the user is new and the browser anonymous: the browser's own row (with its history) becomes
///   the user's, and its token stands for the user from now on;
/// - an anonymous browser of a user who exists: its token stands for the user from now on, and
///   its anonymous history stays where it was (left behind, not merged: anonymous history
///   becomes an account's only from the browser that created the account);
/// - a browser of another user: nothing of theirs moves; a new token for this user is made.
pub async fn link(
    db: &Db,
    agent_id: &str,
    token_row: &str,
    person: &str,
    host_origin: Option<&str>,
    claimed: &Claimed,
    now: i64,
) -> Result<Linked, DbError> {
    let mut tx = db.begin_write().await?;
    let existing: Option<EndUser> =
        sqlx::query_as(&format!("SELECT {USER_COLUMNS} FROM end_users WHERE agent_id = $1 AND subject = $2"))
            .bind(agent_id)
            .bind(&claimed.subject)
            .fetch_optional(&mut *tx)
            .await?;
    let owner_of_person: Option<(String,)> = sqlx::query_as("SELECT subject FROM end_users WHERE visitor_id = $1")
        .bind(person)
        .fetch_optional(&mut *tx)
        .await?;
    let anonymous = owner_of_person.is_none();
    let mut fresh_token = None;
    let user = match existing {
        Some(mut user) => {
            if user.visitor_id != person {
                if anonymous {
                    // Its token stands for the user from now on. Its anonymous history is not
                    // merged into the existing account (issue 41: whoever replays a copied token
                    // must not plant data in someone's account).
                    sqlx::query("UPDATE visitors SET acts_as = $1 WHERE id = $2 OR acts_as = $3")
                        .bind(&user.visitor_id)
                        .bind(token_row)
                        .bind(person)
                        .execute(&mut *tx)
                        .await?;
                } else {
                    let token = new_token();
                    insert(
                        &mut *tx,
                        agent_id,
                        &token,
                        host_origin,
                        Some(&user.visitor_id),
                        &ClientFacts::default(),
                        now,
                    )
                    .await?;
                    fresh_token = Some(token);
                }
            }
            sqlx::query(
                "UPDATE end_users SET name = COALESCE($2, name), email = COALESCE($3, email), last_seen_at = $4 \
                 WHERE id = $1",
            )
            .bind(&user.id)
            .bind(&claimed.name)
            .bind(&claimed.email)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            user.name = claimed.name.clone().or(user.name);
            user.email = claimed.email.clone().or(user.email);
            user.last_seen_at = now;
            user
        }
        None => {
            // A new user: the anonymous browser's own row becomes theirs; a browser of another
            // user gets a fresh row and token.
            let visitor_id = if anonymous {
                person.to_owned()
            } else {
                let token = new_token();
                let id = insert(&mut *tx, agent_id, &token, host_origin, None, &ClientFacts::default(), now).await?;
                fresh_token = Some(token);
                id
            };
            let user = EndUser {
                id: new_id(),
                agent_id: agent_id.to_owned(),
                subject: claimed.subject.clone(),
                name: claimed.name.clone(),
                email: claimed.email.clone(),
                visitor_id,
                created_at: now,
                last_seen_at: now,
            };
            sqlx::query(&format!("INSERT INTO end_users ({USER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)"))
                .bind(&user.id)
                .bind(agent_id)
                .bind(&user.subject)
                .bind(&user.name)
                .bind(&user.email)
                .bind(&user.visitor_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            user
        }
    };
    tx.commit().await?;
    Ok(Linked { user, new_token: fresh_token })
}

/// The newest conversation a visitor row holds with the agent, if any.
pub async fn latest_conversation(db: &Db, agent_id: &str, visitor_id: &str) -> Result<Option<String>, DbError> {
    let row: Option<(String,)> = sqlx::query_as(
        "SELECT id FROM conversations WHERE agent_id = $1 AND visitor_id = $2 AND status <> 'closed' \
         ORDER BY updated_at DESC, id DESC LIMIT 1",
    )
    .bind(agent_id)
    .bind(visitor_id)
    .fetch_optional(&mut *db.read().await?)
    .await?;
    Ok(row.map(|(id,)| id))
}

crate::store::row_struct! {
    /// A user with how many conversations they have (the console's list).
    #[derive(Clone, Debug, PartialEq)]
    pub struct UserSummary {
        pub subject: String,
        pub name: Option<String>,
        pub email: Option<String>,
        pub created_at: i64,
        pub last_seen_at: i64,
        pub conversations: i64,
    }
}

/// An agent's users, most recently seen first (the console).
pub async fn list_users(db: &Db, agent_id: &str, limit: i64) -> Result<Vec<UserSummary>, DbError> {
    sqlx::query_as(
        "SELECT u.subject, u.name, u.email, u.created_at, u.last_seen_at, \
         (SELECT COUNT(*) FROM conversations c WHERE c.visitor_id = u.visitor_id) AS conversations \
         FROM end_users u WHERE u.agent_id = $1 ORDER BY u.last_seen_at DESC, u.id DESC LIMIT $2",
    )
    .bind(agent_id)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}
