//! Leads: a visitor's request to be contacted by a person.

use parley_widget::protocol::LeadForm;

use super::{Db, DbError, new_id};

/// Saves the lead and marks the conversation as waiting for a person, in one transaction.
pub async fn submit(
    db: &Db,
    agent_id: &str,
    conversation_id: &str,
    visitor_id: &str,
    form: &LeadForm,
    now: i64,
) -> Result<String, DbError> {
    let id = new_id();
    let blank_to_none = |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let mut tx = db.writer().begin().await?;
    sqlx::query(
        "INSERT INTO leads (id, agent_id, conversation_id, visitor_id, name, email, phone, message, status, \
         notes, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'new', '', $9, $9)",
    )
    .bind(&id)
    .bind(agent_id)
    .bind(conversation_id)
    .bind(visitor_id)
    .bind(form.name.trim())
    .bind(blank_to_none(&form.email))
    .bind(blank_to_none(&form.phone))
    .bind(form.message.trim())
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE conversations SET lead_submitted = 1, updated_at = $2, \
         status = CASE WHEN status = 'bot' THEN 'waiting_human' ELSE status END WHERE id = $1",
    )
    .bind(conversation_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// A stored lead.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct Lead {
    pub id: String,
    pub conversation_id: String,
    pub name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub message: String,
    pub status: String,
}

pub async fn of_conversation(db: &Db, conversation_id: &str) -> Result<Vec<Lead>, DbError> {
    sqlx::query_as(
        "SELECT id, conversation_id, name, email, phone, message, status FROM leads \
         WHERE conversation_id = $1 ORDER BY created_at",
    )
    .bind(conversation_id)
    .fetch_all(&mut *db.read().await?)
    .await
}
