//! The raw material of the console's *Unanswered questions* (issue 17): visitor questions where
//! knowledge search found nothing, the off-topic check fired, the answer was rated not helpful,
//! or the visitor asked for a person right after.

use std::collections::HashMap;

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

/// What a tool call (its name and stored JSON result) says about the answer it was part of:
/// knowledge search found nothing, the question was off topic, or the visitor asked for a person.
pub fn tool_signal(name: &str, result: Option<&str>) -> Option<Reason> {
    let result: Value = result.and_then(|r| serde_json::from_str(r).ok()).unwrap_or(Value::Null);
    match name {
        "search_knowledge" if result["success"] == true && result["sources"].as_array().is_some_and(Vec::is_empty) => {
            Some(Reason::NothingFound)
        }
        "check_off_topic" if result["isOffTopic"] == true => Some(Reason::OffTopic),
        "escalate_to_human" => Some(Reason::Escalated),
        _ => None,
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
    // Each signal with the time of the answer (or form) it is about: the visitor's last message
    // at or before that time is the question.
    let mut about: Vec<(String, i64, Reason, i64)> = Vec::new();
    let calls: Vec<(String, i64, String, Option<String>, i64)> = sqlx::query_as(
        "SELECT t.conversation_id, m.created_at, t.name, t.result, t.created_at FROM tool_calls t \
         JOIN conversations c ON c.id = t.conversation_id JOIN messages m ON m.id = t.message_id \
         WHERE ($1 IS NULL OR c.agent_id = $1) AND t.created_at >= $2 \
         AND t.name IN ('search_knowledge', 'check_off_topic', 'escalate_to_human') \
         ORDER BY t.created_at DESC LIMIT $3",
    )
    .bind(agent_id)
    .bind(since)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    for (conversation, answered_at, name, result, at) in calls {
        let Some(reason) = tool_signal(&name, result.as_deref()) else { continue };
        about.push((conversation, answered_at, reason, at));
    }
    let down: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT r.conversation_id, m.created_at, r.updated_at FROM ratings r JOIN messages m ON m.id = r.message_id \
         WHERE ($1 IS NULL OR r.agent_id = $1) AND r.updated_at >= $2 AND r.message_id <> '' AND r.score < 0 \
         ORDER BY r.updated_at DESC LIMIT $3",
    )
    .bind(agent_id)
    .bind(since)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    about.extend(down.into_iter().map(|(c, answered_at, at)| (c, answered_at, Reason::ThumbsDown, at)));
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
    about.extend(leads.into_iter().map(|(c, at)| (c, at, Reason::Escalated, at)));

    // The visitors' messages of those conversations, read a few hundred conversations at a time.
    let mut ids: Vec<&str> = about.iter().map(|(c, ..)| c.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut asked: HashMap<String, Vec<(i64, String)>> = HashMap::new();
    for chunk in ids.chunks(500) {
        let list = (1..=chunk.len()).map(|i| format!("${i}")).collect::<Vec<_>>().join(",");
        let sql = format!(
            "SELECT conversation_id, created_at, content FROM messages WHERE role = 'visitor' \
             AND conversation_id IN ({list}) ORDER BY conversation_id, created_at"
        );
        let mut q = sqlx::query_as::<_, (String, i64, String)>(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        for (conversation, at, content) in q.fetch_all(&mut *conn).await? {
            asked.entry(conversation).or_default().push((at, content));
        }
    }
    let mut out = Vec::with_capacity(about.len());
    for (conversation_id, answered_at, reason, at) in about {
        let Some(messages) = asked.get(&conversation_id) else { continue };
        let before = messages.partition_point(|(t, _)| *t <= answered_at);
        let Some((_, question)) = before.checked_sub(1).map(|i| &messages[i]) else { continue };
        if !question.trim().is_empty() {
            out.push(Unanswered { conversation_id, question: question.clone(), reason, at });
        }
    }
    Ok(out)
}
