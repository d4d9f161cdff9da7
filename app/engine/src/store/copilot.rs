//! The operator's copilot's stored part (issue 43, part 7): the summary of a conversation written
//! for the person it is handed to. Drafts and rewrites are never stored: the operator edits them
//! in the reply box and sends what they choose.

use super::{Db, DbError};

/// A conversation's hand-over summary.
#[derive(Clone, Debug, PartialEq)]
pub struct HandoffSummary {
    pub text: String,
    /// The model that wrote it (`demo`: the offline demo model's extract).
    pub model: String,
    pub created_at: i64,
}

/// The conversation's summary, if one was written.
pub async fn summary(db: &Db, conversation_id: &str) -> Result<Option<HandoffSummary>, DbError> {
    let row: Option<(Option<String>, Option<String>, Option<i64>)> = sqlx::query_as(
        "SELECT handoff_summary, handoff_summary_model, handoff_summary_at FROM conversations WHERE id = $1",
    )
    .bind(conversation_id)
    .fetch_optional(&mut *db.read().await?)
    .await?;
    Ok(row.and_then(|(text, model, at)| {
        Some(HandoffSummary { text: text?, model: model.unwrap_or_default(), created_at: at.unwrap_or(0) })
    }))
}

/// Stores the summary (replacing an older one).
pub async fn set_summary(db: &Db, conversation_id: &str, summary: &HandoffSummary) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE conversations SET handoff_summary = $2, handoff_summary_model = $3, handoff_summary_at = $4 \
         WHERE id = $1",
    )
    .bind(conversation_id)
    .bind(&summary.text)
    .bind(&summary.model)
    .bind(summary.created_at)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// Whether the conversation needs a (new) summary: it has none, or messages came after it.
pub async fn summary_is_stale(db: &Db, conversation_id: &str) -> Result<bool, DbError> {
    let (at, newest): (Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT c.handoff_summary_at, (SELECT MAX(m.created_at) FROM messages m WHERE m.conversation_id = c.id) \
         FROM conversations c WHERE c.id = $1",
    )
    .bind(conversation_id)
    .fetch_optional(&mut *db.read().await?)
    .await?
    .unwrap_or((None, None));
    Ok(match (at, newest) {
        (None, Some(_)) => true,
        (Some(at), Some(newest)) => newest > at,
        (_, None) => false,
    })
}
