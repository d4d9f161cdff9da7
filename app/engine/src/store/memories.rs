//! What a visitor told the agent, kept across conversations (the visitor returns with the same
//! token). Never shared between visitors.

use super::{Db, DbError, new_id};

/// The kinds of memory and their importance when saved by the visitor's own words.
pub const KINDS: &[(&str, i64)] = &[("FACT", 70), ("INTENT", 80), ("PREFERENCE", 60)];

crate::store::row_struct! {
    #[derive(Clone, Debug, PartialEq, serde::Serialize)]
    pub struct Memory {
        pub id: String,
        pub kind: String,
        pub content: String,
        pub category: Option<String>,
        pub importance: i64,
        pub created_at: i64,
    }
}

#[allow(clippy::too_many_arguments)]
pub async fn save(
    db: &Db,
    visitor_id: &str,
    agent_id: &str,
    kind: &str,
    content: &str,
    category: Option<&str>,
    importance: i64,
    now: i64,
) -> Result<Memory, DbError> {
    let id = format!("mem_{}", new_id().replace('-', ""));
    sqlx::query(
        "INSERT INTO memories (id, visitor_id, agent_id, kind, content, category, importance, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&id)
    .bind(visitor_id)
    .bind(agent_id)
    .bind(kind)
    .bind(content)
    .bind(category)
    .bind(importance)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(Memory {
        id,
        kind: kind.into(),
        content: content.into(),
        category: category.map(Into::into),
        importance,
        created_at: now,
    })
}

/// All of a visitor's memories, most important first.
pub async fn of_visitor(db: &Db, visitor_id: &str) -> Result<Vec<Memory>, DbError> {
    sqlx::query_as(
        "SELECT id, kind, content, category, importance, created_at FROM memories WHERE visitor_id = $1 \
         ORDER BY importance DESC, created_at DESC",
    )
    .bind(visitor_id)
    .fetch_all(&mut *db.read().await?)
    .await
}
