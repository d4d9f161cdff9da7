//! Visitors' ratings of answers and of closed conversations (issue 17), each reported to the
//! agent's webhooks in the same transaction.

use serde_json::json;

use super::{Db, DbError, new_id, webhooks};

/// A rating to store.
#[derive(Clone, Debug, PartialEq)]
pub struct NewRating<'a> {
    pub agent_id: &'a str,
    pub conversation_id: &'a str,
    pub visitor_id: &'a str,
    /// The rated answer with the question before it (`None`: the whole conversation).
    pub answer: Option<RatedAnswer<'a>>,
    pub score: i64,
    pub comment: Option<&'a str>,
}

/// The answer a rating is about.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatedAnswer<'a> {
    pub message_id: &'a str,
    pub text: &'a str,
    pub question: Option<&'a str>,
}

/// Stores the rating (replacing the visitor's earlier rating of the same answer or conversation)
/// and queues `answer.rated` or `conversation.rated`.
pub async fn save(db: &Db, r: &NewRating<'_>, now: i64) -> Result<(), DbError> {
    let target = r.answer.map_or("", |a| a.message_id);
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "INSERT INTO ratings (id, agent_id, conversation_id, message_id, score, comment, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (conversation_id, message_id) \
         DO UPDATE SET score = excluded.score, comment = excluded.comment, updated_at = excluded.updated_at",
    )
    .bind(new_id())
    .bind(r.agent_id)
    .bind(r.conversation_id)
    .bind(target)
    .bind(r.score)
    .bind(r.comment)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let (event, data) = match r.answer {
        Some(a) => (
            "answer.rated",
            json!({
                "conversation_id": r.conversation_id,
                "visitor_id": r.visitor_id,
                "message_id": a.message_id,
                "rating": if r.score > 0 { "up" } else { "down" },
                "comment": r.comment,
                "question": a.question,
                "answer": a.text,
            }),
        ),
        None => (
            "conversation.rated",
            json!({
                "conversation_id": r.conversation_id,
                "visitor_id": r.visitor_id,
                "score": r.score,
                "comment": r.comment,
            }),
        ),
    };
    webhooks::emit(&mut tx, r.agent_id, event, Some(r.conversation_id), data, now).await?;
    tx.commit().await?;
    Ok(())
}

/// A stored rating: `(message_id, score, comment)`; `message_id` is '' for the conversation.
pub type RatingRow = (String, i64, Option<String>);

/// A conversation's ratings.
pub async fn of_conversation(db: &Db, conversation_id: &str) -> Result<Vec<RatingRow>, DbError> {
    sqlx::query_as("SELECT message_id, score, comment FROM ratings WHERE conversation_id = $1 ORDER BY created_at")
        .bind(conversation_id)
        .fetch_all(&mut *db.read().await?)
        .await
}

crate::store::row_struct! {
    /// One agent's ratings over a period.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Tally {
        pub agent_id: String,
        /// Answers rated helpful and not.
        pub up: i64,
        pub down: i64,
        /// Conversations rated, and the sum of their scores.
        pub conversations: i64,
        pub conversation_score: i64,
    }
}

/// Every agent's ratings last changed in `[from, to)`.
pub async fn tally(db: &Db, from: i64, to: i64) -> Result<Vec<Tally>, DbError> {
    sqlx::query_as(
        "SELECT agent_id, \
         CAST(SUM(CASE WHEN message_id <> '' AND score > 0 THEN 1 ELSE 0 END) AS BIGINT) AS up, \
         CAST(SUM(CASE WHEN message_id <> '' AND score < 0 THEN 1 ELSE 0 END) AS BIGINT) AS down, \
         CAST(SUM(CASE WHEN message_id = '' THEN 1 ELSE 0 END) AS BIGINT) AS conversations, \
         CAST(SUM(CASE WHEN message_id = '' THEN score ELSE 0 END) AS BIGINT) AS conversation_score \
         FROM ratings WHERE updated_at >= $1 AND updated_at < $2 GROUP BY agent_id ORDER BY agent_id",
    )
    .bind(from)
    .bind(to)
    .fetch_all(&mut *db.read().await?)
    .await
}
