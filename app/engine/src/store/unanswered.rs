//! The raw material of the console's *Unanswered questions* (issue 17): visitor questions where
//! knowledge search found nothing, the off-topic check fired, the answer was rated not helpful,
//! or the visitor asked for a person right after.

use serde_json::Value;

use super::{Db, DbError};

/// Why a question counts as unanswered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Reason {
    /// `search_knowledge` found no article.
    NothingFound,
    /// `check_off_topic` said the question is outside the agent's field.
    OffTopic,
    /// The visitor rated the answer not helpful.
    ThumbsDown,
    /// The visitor asked for a person (the escalation tool, or the contact form) right after.
    Escalated,
}

impl Reason {
    pub fn label(self) -> &'static str {
        match self {
            Reason::NothingFound => "nothing found in the knowledge",
            Reason::OffTopic => "off-topic",
            Reason::ThumbsDown => "rated not helpful",
            Reason::Escalated => "asked for a person",
        }
    }
}

/// One unanswered question.
#[derive(Clone, Debug, PartialEq)]
pub struct Unanswered {
    pub conversation_id: String,
    pub question: String,
    pub reason: Reason,
    pub at: i64,
}

/// Signals since `since` (newest first, `limit` of each kind at most), each with the visitor
/// question it is about, for one agent or all.
pub async fn since(db: &Db, agent_id: Option<&str>, since: i64, limit: i64) -> Result<Vec<Unanswered>, DbError> {
    let mut conn = db.read().await?;
    // The answer a signal is about: the visitor message before it is the question.
    let mut about: Vec<(String, String, Reason, i64)> = Vec::new();
    let calls: Vec<(String, String, String, Option<String>, i64)> = sqlx::query_as(
        "SELECT t.conversation_id, t.message_id, t.name, t.result, t.created_at FROM tool_calls t \
         JOIN conversations c ON c.id = t.conversation_id \
         WHERE ($1 IS NULL OR c.agent_id = $1) AND t.created_at >= $2 \
         AND t.name IN ('search_knowledge', 'check_off_topic', 'escalate_to_human') \
         ORDER BY t.created_at DESC LIMIT $3",
    )
    .bind(agent_id)
    .bind(since)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    for (conversation, message, name, result, at) in calls {
        let result: Value = result.as_deref().and_then(|r| serde_json::from_str(r).ok()).unwrap_or(Value::Null);
        let reason = match name.as_str() {
            "search_knowledge"
                if result["success"] == true && result["sources"].as_array().is_some_and(Vec::is_empty) =>
            {
                Reason::NothingFound
            }
            "check_off_topic" if result["isOffTopic"] == true => Reason::OffTopic,
            "escalate_to_human" => Reason::Escalated,
            _ => continue,
        };
        about.push((conversation, message, reason, at));
    }
    let down: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT r.conversation_id, r.message_id, r.updated_at FROM ratings r \
         WHERE ($1 IS NULL OR r.agent_id = $1) AND r.updated_at >= $2 AND r.message_id <> '' AND r.score < 0 \
         ORDER BY r.updated_at DESC LIMIT $3",
    )
    .bind(agent_id)
    .bind(since)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    about.extend(down.into_iter().map(|(c, m, at)| (c, m, Reason::ThumbsDown, at)));
    let mut out = Vec::with_capacity(about.len());
    for (conversation_id, message_id, reason, at) in about {
        let question: Option<(String,)> = sqlx::query_as(
            "SELECT content FROM messages WHERE conversation_id = $1 AND role = 'visitor' \
             AND created_at <= (SELECT created_at FROM messages WHERE id = $2) ORDER BY created_at DESC LIMIT 1",
        )
        .bind(&conversation_id)
        .bind(&message_id)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some((question,)) = question.filter(|(q,)| !q.trim().is_empty()) {
            out.push(Unanswered { conversation_id, question, reason, at });
        }
    }
    // Contact forms: the question is the visitor's last message before the form.
    let leads: Vec<(String, i64)> = sqlx::query_as(
        "SELECT l.conversation_id, l.created_at FROM leads l WHERE ($1 IS NULL OR l.agent_id = $1) \
         AND l.created_at >= $2 ORDER BY l.created_at DESC LIMIT $3",
    )
    .bind(agent_id)
    .bind(since)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    for (conversation_id, at) in leads {
        let question: Option<(String,)> = sqlx::query_as(
            "SELECT content FROM messages WHERE conversation_id = $1 AND role = 'visitor' AND created_at <= $2 \
             ORDER BY created_at DESC LIMIT 1",
        )
        .bind(&conversation_id)
        .bind(at)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some((question,)) = question.filter(|(q,)| !q.trim().is_empty()) {
            out.push(Unanswered { conversation_id, question, reason: Reason::Escalated, at });
        }
    }
    Ok(out)
}
