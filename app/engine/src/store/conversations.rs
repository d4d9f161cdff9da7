//! Conversations between one visitor and one agent.

use parley_protocol::ConversationStatus;

use super::{Db, DbError, webhooks};

#[derive(Clone, Debug, PartialEq)]
pub struct Conversation {
    pub id: String,
    pub agent_id: String,
    pub visitor_id: String,
    pub status: ConversationStatus,
    pub lead_submitted: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

crate::store::row_struct! {
    struct Row {
        id: String,
        agent_id: String,
        visitor_id: String,
        status: String,
        lead_submitted: i64,
        created_at: i64,
        updated_at: i64,
    }
}

impl From<Row> for Conversation {
    fn from(r: Row) -> Self {
        Conversation {
            id: r.id,
            agent_id: r.agent_id,
            visitor_id: r.visitor_id,
            status: ConversationStatus::parse(&r.status).unwrap_or(ConversationStatus::Bot),
            lead_submitted: r.lead_submitted != 0,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

const COLUMNS: &str = "id, agent_id, visitor_id, status, lead_submitted, created_at, updated_at";

pub async fn by_id(db: &Db, id: &str) -> Result<Option<Conversation>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM conversations WHERE id = $1");
    let row: Option<Row> = sqlx::query_as(&sql).bind(id).fetch_optional(&mut *db.read().await?).await?;
    Ok(row.map(Conversation::from))
}

/// The conversation, if it belongs to this visitor.
pub async fn of_visitor(db: &Db, id: &str, visitor_id: &str) -> Result<Option<Conversation>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM conversations WHERE id = $1 AND visitor_id = $2");
    let row: Option<Row> =
        sqlx::query_as(&sql).bind(id).bind(visitor_id).fetch_optional(&mut *db.read().await?).await?;
    Ok(row.map(Conversation::from))
}

pub async fn set_status(db: &Db, id: &str, status: ConversationStatus, now: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE conversations SET status = $2, updated_at = $3 WHERE id = $1")
        .bind(id)
        .bind(status.as_str())
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Stores the coordinator's last consulting state (JSON).
pub async fn set_consulting_state(db: &Db, id: &str, state: &serde_json::Value) -> Result<(), DbError> {
    sqlx::query("UPDATE conversations SET consulting_state = $2 WHERE id = $1")
        .bind(id)
        .bind(state.to_string())
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Adds assessment facts to the conversation's (a fact given again replaces the earlier one);
/// returns them all.
pub async fn add_assessment_facts(
    db: &Db,
    id: &str,
    facts: &serde_json::Map<String, serde_json::Value>,
) -> Result<serde_json::Value, DbError> {
    let mut all = match assessment_facts(db, id).await? {
        Some(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    all.extend(facts.iter().map(|(k, v)| (k.clone(), v.clone())));
    let all = serde_json::Value::Object(all);
    sqlx::query("UPDATE conversations SET assessment = $2 WHERE id = $1")
        .bind(id)
        .bind(all.to_string())
        .execute(db.writer())
        .await?;
    Ok(all)
}

/// The assessment facts collected in the conversation, if any.
pub async fn assessment_facts(db: &Db, id: &str) -> Result<Option<serde_json::Value>, DbError> {
    let raw: Option<Option<String>> = sqlx::query_scalar("SELECT assessment FROM conversations WHERE id = $1")
        .bind(id)
        .fetch_optional(db.writer())
        .await?;
    Ok(raw.flatten().and_then(|s| serde_json::from_str(&s).ok()))
}

/// The coordinator's last consulting state, if it reported one.
pub async fn consulting_state(db: &Db, id: &str) -> Result<Option<serde_json::Value>, DbError> {
    let raw: Option<Option<String>> = sqlx::query_scalar("SELECT consulting_state FROM conversations WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(raw.flatten().and_then(|s| serde_json::from_str(&s).ok()))
}

/// What the model's context needs of a conversation besides its messages: the summary of its
/// older turns (and the time it reaches) and the coordinator's consulting state.
pub async fn context_row(db: &Db, id: &str) -> Result<(Option<(String, i64)>, Option<serde_json::Value>), DbError> {
    let row: Option<(Option<String>, Option<i64>, Option<String>)> =
        sqlx::query_as("SELECT summary, summary_until, consulting_state FROM conversations WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    let Some((summary, until, state)) = row else { return Ok((None, None)) };
    let summary = summary.zip(until);
    Ok((summary, state.and_then(|s| serde_json::from_str(&s).ok())))
}

/// Stores the summary of the turns up to `until` (created_at, ms).
pub async fn set_summary(db: &Db, id: &str, summary: &str, until: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE conversations SET summary = $2, summary_until = $3 WHERE id = $1")
        .bind(id)
        .bind(summary)
        .bind(until)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Who handles a conversation: `(agent_id, status, claimed_by)`.
pub async fn holder(db: &Db, id: &str) -> Result<Option<(String, String, Option<String>)>, DbError> {
    sqlx::query_as("SELECT agent_id, status, claimed_by FROM conversations WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// Gives the conversation to an operator unless someone holds it or it is closed: true when this
/// call got it (a conditional update, so of two operators only one can). The claimer becomes its
/// assignee too (issue 43: taking it makes it theirs).
pub async fn claim(db: &Db, id: &str, user_id: &str, now: i64) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    let done = sqlx::query(
        "UPDATE conversations SET status = 'human', claimed_by = $2, claimed_at = $3, updated_at = $3, \
         assignee_id = $2, assigned_at = $3 WHERE id = $1 AND claimed_by IS NULL AND status <> 'closed'",
    )
    .bind(id)
    .bind(user_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        tx.rollback().await?;
        return Ok(false);
    }
    if let Some(agent_id) = webhooks::agent_of_conversation(&mut tx, id).await? {
        let operator = webhooks::operator(&mut tx, user_id).await?;
        let data = serde_json::json!({"conversation_id": id, "operator": operator, "assignee": operator});
        webhooks::emit(&mut tx, &agent_id, "conversation.claimed", Some(id), data, now).await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// Lets go of the claim, with the conversation's new status (`bot` or `closed`); `by` is the
/// console user who did it (a closing is reported to the agent's webhooks).
pub async fn unclaim(db: &Db, id: &str, status: ConversationStatus, by: Option<&str>, now: i64) -> Result<(), DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "UPDATE conversations SET status = $3, claimed_by = NULL, claimed_at = NULL, updated_at = $2 WHERE id = $1",
    )
    .bind(id)
    .bind(now)
    .bind(status.as_str())
    .execute(&mut *tx)
    .await?;
    if status == ConversationStatus::Closed
        && let Some(agent_id) = webhooks::agent_of_conversation(&mut tx, id).await?
    {
        let by = match by {
            Some(user) => webhooks::operator(&mut tx, user).await?,
            None => serde_json::Value::Null,
        };
        let data = serde_json::json!({"conversation_id": id, "closed_by": by});
        webhooks::emit(&mut tx, &agent_id, "conversation.closed", Some(id), data, now).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The conversation is a trial (an answer test, the draft's preview; migration 0045): nothing
/// about it reaches webhooks, mail or people.
pub async fn is_trial(tx: &mut sqlx::Transaction<'_, sqlx::Any>, id: &str) -> Result<bool, DbError> {
    let trial: Option<i64> =
        sqlx::query_scalar("SELECT trial FROM conversations WHERE id = $1").bind(id).fetch_optional(&mut **tx).await?;
    Ok(trial.unwrap_or(0) != 0)
}

/// The agent and visitor of the trial conversation `id` (`None`: no such trial).
pub async fn trial_of(db: &Db, id: &str) -> Result<Option<(String, String)>, DbError> {
    sqlx::query_as("SELECT agent_id, visitor_id FROM conversations WHERE id = $1 AND trial = 1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// The visitors of trial conversations last touched before `cutoff` (Unix ms).
pub async fn idle_trial_visitors(db: &Db, cutoff: i64) -> Result<Vec<String>, DbError> {
    sqlx::query_scalar(
        "SELECT DISTINCT visitor_id FROM conversations WHERE trial = 1 AND updated_at < $1 ORDER BY visitor_id LIMIT 500",
    )
    .bind(cutoff)
    .fetch_all(&mut *db.read().await?)
    .await
}
