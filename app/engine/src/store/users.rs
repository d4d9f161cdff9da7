//! People who sign in to the console. Passwords are stored as Argon2 hashes only.

use super::{Db, DbError, new_id};

/// What a signed-in person may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything.
    Admin,
    /// Conversations, leads, orders; no agent or key settings.
    Operator,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Operator => "operator",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "admin" => Some(Role::Admin),
            "operator" => Some(Role::Operator),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct User {
    pub id: String,
    pub email: String,
    pub name: String,
    pub role: Role,
}

crate::store::row_struct! {
    struct Row {
        id: String,
        email: String,
        name: String,
        role: String,
        password_hash: String,
    }
}

impl Row {
    fn user(&self) -> User {
        User {
            id: self.id.clone(),
            email: self.email.clone(),
            name: self.name.clone(),
            role: Role::parse(&self.role).unwrap_or(Role::Operator),
        }
    }
}

/// Emails are compared lower-cased and trimmed.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

pub async fn count(db: &Db) -> Result<i64, DbError> {
    sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&mut *db.read().await?).await
}

/// Stores a user with an already computed password hash.
pub async fn insert(
    db: &Db,
    email: &str,
    name: &str,
    role: Role,
    password_hash: &str,
    now: i64,
) -> Result<User, DbError> {
    let id = new_id();
    let email = normalize_email(email);
    sqlx::query("INSERT INTO users (id, email, name, role, password_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(&id)
        .bind(&email)
        .bind(name)
        .bind(role.as_str())
        .bind(password_hash)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(User { id, email, name: name.to_owned(), role })
}

/// The user and their password hash, by email.
pub async fn with_hash(db: &Db, email: &str) -> Result<Option<(User, String)>, DbError> {
    let row: Option<Row> = sqlx::query_as("SELECT id, email, name, role, password_hash FROM users WHERE email = $1")
        .bind(normalize_email(email))
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.map(|r| (r.user(), r.password_hash)))
}

pub async fn by_id(db: &Db, id: &str) -> Result<Option<User>, DbError> {
    let row: Option<Row> = sqlx::query_as("SELECT id, email, name, role, password_hash FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.map(|r| r.user()))
}

pub async fn list(db: &Db) -> Result<Vec<User>, DbError> {
    let rows: Vec<Row> = sqlx::query_as("SELECT id, email, name, role, password_hash FROM users ORDER BY created_at")
        .fetch_all(&mut *db.read().await?)
        .await?;
    Ok(rows.iter().map(Row::user).collect())
}

/// Stores a new password hash; every session the user started before `now` ends.
pub async fn set_password(db: &Db, id: &str, password_hash: &str, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query("UPDATE users SET password_hash = $2, sessions_after = $3 WHERE id = $1")
        .bind(id)
        .bind(password_hash)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// The user, and the moment (ms) before which their sessions are over.
pub async fn for_session(db: &Db, id: &str) -> Result<Option<(User, i64)>, DbError> {
    let row: Option<(String, String, String, String, i64)> =
        sqlx::query_as("SELECT id, email, name, role, sessions_after FROM users WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    Ok(row.map(|(id, email, name, role, after)| {
        (User { id, email, name, role: Role::parse(&role).unwrap_or(Role::Operator) }, after)
    }))
}

pub async fn touch_login(db: &Db, id: &str, now: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE users SET last_login_at = $2 WHERE id = $1").bind(id).bind(now).execute(db.writer()).await?;
    Ok(())
}
