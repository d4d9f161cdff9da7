//! Operators' saved replies (issue 17): per agent, each with a shortcut typed after `/` in the
//! reply box.

use super::{Db, DbError, new_id};

crate::store::row_struct! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct SavedReply {
        pub id: String,
        pub agent_id: String,
        pub shortcut: String,
        pub body: String,
        pub updated_at: i64,
    }
}

/// Longest shortcut and body.
pub const MAX_SHORTCUT: usize = 32;
pub const MAX_BODY_CHARS: usize = 4000;

/// A shortcut as stored (lower case), or why it cannot be one.
pub fn shortcut(raw: &str) -> Result<String, &'static str> {
    let s = raw.trim().trim_start_matches('/').to_lowercase();
    if s.is_empty() || s.chars().count() > MAX_SHORTCUT {
        return Err("A shortcut of 1 to 32 characters.");
    }
    if !s.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') {
        return Err("Letters, digits, - and _ only.");
    }
    Ok(s)
}

/// An agent's saved replies, by shortcut.
pub async fn of_agent(db: &Db, agent_id: &str) -> Result<Vec<SavedReply>, DbError> {
    sqlx::query_as(
        "SELECT id, agent_id, shortcut, body, updated_at FROM saved_replies WHERE agent_id = $1 ORDER BY shortcut",
    )
    .bind(agent_id)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Adds a reply, or rewrites the agent's reply with the same shortcut; its id.
pub async fn save(db: &Db, agent_id: &str, shortcut: &str, body: &str, by: &str, now: i64) -> Result<String, DbError> {
    let row: (String,) = sqlx::query_as(
        "INSERT INTO saved_replies (id, agent_id, shortcut, body, created_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (agent_id, shortcut) \
         DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at RETURNING id",
    )
    .bind(new_id())
    .bind(agent_id)
    .bind(shortcut)
    .bind(body)
    .bind(by)
    .bind(now)
    .fetch_one(db.writer())
    .await?;
    Ok(row.0)
}

/// Deletes a reply; false when there was none.
pub async fn delete(db: &Db, id: &str) -> Result<bool, DbError> {
    let done = sqlx::query("DELETE FROM saved_replies WHERE id = $1").bind(id).execute(db.writer()).await?;
    Ok(done.rows_affected() == 1)
}
