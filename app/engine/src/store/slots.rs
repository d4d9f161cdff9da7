//! A conversation's slot across processes (PostgreSQL replicas): the one process that may number
//! its events at a time. See `migrations/0020_turn_slots.sql`.

use super::script::{Arg, Stmt};
use super::{Db, DbError};

/// Takes the slot for `process` under `token`: when it is free, already this process's, or held
/// by a process whose lease was last renewed before `live_after`. False when another live
/// process holds it, or the conversation does not exist.
pub async fn claim(
    db: &Db,
    conversation_id: &str,
    process: &str,
    token: &str,
    live_after: i64,
) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE conversations SET slot_process = $2, slot_token = $3 WHERE id = $1 AND (slot_process IS NULL \
         OR slot_process = $2 OR NOT EXISTS (SELECT 1 FROM processes p WHERE p.id = conversations.slot_process \
         AND p.heartbeat_at >= $4))",
    )
    .bind(conversation_id)
    .bind(process)
    .bind(token)
    .bind(live_after)
    .execute(db.writer())
    .await?
    .rows_affected();
    Ok(done > 0)
}

/// Gives the slot back, if it is still held under `token` (run by the stream writer after the
/// events numbered under it).
pub fn release_stmt(conversation_id: &str, token: &str) -> Stmt {
    Stmt::new(
        "UPDATE conversations SET slot_process = NULL, slot_token = NULL WHERE id = $1 AND slot_token = $2",
        vec![Arg::from(conversation_id), Arg::from(token)],
    )
}

/// Gives many slots back in one statement (each only if its token still holds it).
pub fn release_stmts(releases: &[(String, String)]) -> Vec<Stmt> {
    let rows = releases.iter().map(|(c, token)| vec![Arg::from(c), Arg::from(token)]).collect();
    super::update_rows(
        "conversations",
        "slot_process = NULL, slot_token = NULL",
        "conversations.id = v.column1 AND conversations.slot_token = v.column2",
        2,
        rows,
        500,
    )
}

/// The process holding the slot, if any.
pub async fn holder(db: &Db, conversation_id: &str) -> Result<Option<String>, DbError> {
    let row: Option<Option<String>> = sqlx::query_scalar("SELECT slot_process FROM conversations WHERE id = $1")
        .bind(conversation_id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.flatten())
}
