//! The audit log: what console users (and the CLI) did that changes or reveals data.

use super::{Db, DbError, new_id};

crate::store::row_struct! {
    /// One recorded action.
    #[derive(Clone, Debug, PartialEq, serde::Serialize)]
    pub struct Entry {
        pub id: String,
        pub at: i64,
        pub actor_id: Option<String>,
        pub actor: String,
        pub action: String,
        pub target: Option<String>,
        pub detail: String,
    }
}

/// Records an action.
pub async fn record(
    db: &Db,
    actor_id: Option<&str>,
    actor: &str,
    action: &str,
    target: Option<&str>,
    detail: &str,
    now: i64,
) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO audit_log (id, at, actor_id, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(new_id())
    .bind(now)
    .bind(actor_id)
    .bind(actor)
    .bind(action)
    .bind(target)
    .bind(detail)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// A page of entries, newest first, and how many match. `action` matches a whole action or its
/// group (`agent` matches `agent.update`); `actor` matches an email or `cli`.
pub async fn list(
    db: &Db,
    action: Option<&str>,
    actor: Option<&str>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Entry>, i64), DbError> {
    const WHERE: &str = "WHERE ($1 IS NULL OR action = $1 OR action LIKE $2) AND ($3 IS NULL OR actor = $3)";
    let group = action.map(|a| format!("{a}.%"));
    let rows = sqlx::query_as(&format!(
        "SELECT id, at, actor_id, actor, action, target, detail FROM audit_log {WHERE} \
         ORDER BY at DESC, id DESC LIMIT $4 OFFSET $5"
    ))
    .bind(action)
    .bind(&group)
    .bind(actor)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *db.read().await?)
    .await?;
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM audit_log {WHERE}"))
        .bind(action)
        .bind(&group)
        .bind(actor)
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok((rows, total))
}
