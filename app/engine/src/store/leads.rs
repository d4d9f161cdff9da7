//! Leads: a visitor's request to be contacted by a person.

use parley_protocol::LeadForm;

use super::{Db, DbError, new_id, webhooks};

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
    let mut tx = db.begin_write().await?;
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
    let was: Option<(String,)> = sqlx::query_as("SELECT status FROM conversations WHERE id = $1")
        .bind(conversation_id)
        .fetch_optional(&mut *tx)
        .await?;
    let lead = serde_json::json!({
        "id": id,
        "name": form.name.trim(),
        "email": blank_to_none(&form.email),
        "phone": blank_to_none(&form.phone),
        "message": form.message.trim(),
        "created_at": webhooks::iso_time(now),
    });
    let data = serde_json::json!({"conversation_id": conversation_id, "visitor_id": visitor_id, "lead": lead});
    webhooks::emit(&mut tx, agent_id, "lead.created", Some(conversation_id), data, now).await?;
    if was.as_ref().is_some_and(|(s,)| s == "bot") {
        let data = serde_json::json!({"conversation_id": conversation_id, "visitor_id": visitor_id, "reason": "lead", "lead_id": id});
        webhooks::emit(&mut tx, agent_id, "conversation.waiting_human", Some(conversation_id), data, now).await?;
    }
    sqlx::query(
        "UPDATE conversations SET lead_submitted = 1, updated_at = $2, \
         status = CASE WHEN status = 'bot' THEN 'waiting_human' ELSE status END WHERE id = $1",
    )
    .bind(conversation_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    // It needs a person now: its agent's team's queue (issue 43), with the status change.
    super::teams::route_in(&mut tx, conversation_id).await?;
    if was.as_ref().is_some_and(|(s,)| s == "bot") {
        super::operator_notifications::queue_in(&mut tx, conversation_id, None, now).await?;
    }
    tx.commit().await?;
    Ok(id)
}

crate::store::row_struct! {
    /// A stored lead.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Lead {
        pub id: String,
        pub agent_id: String,
        pub conversation_id: String,
        pub name: String,
        pub email: Option<String>,
        pub phone: Option<String>,
        pub message: String,
        /// `new`, `contacted` or `closed`.
        pub status: String,
        pub notes: String,
        pub created_at: i64,
    }
}

const COLUMNS: &str = "id, agent_id, conversation_id, name, email, phone, message, status, notes, created_at";

/// Statuses a lead can have.
pub const STATUSES: &[&str] = &["new", "contacted", "closed"];

/// The email of the visitor's newest contact form that has one.
pub async fn latest_email(db: &Db, visitor_id: &str) -> Result<Option<String>, DbError> {
    let row: Option<(String,)> = sqlx::query_as(
        "SELECT email FROM leads WHERE visitor_id = $1 AND email IS NOT NULL AND email <> '' \
         ORDER BY created_at DESC LIMIT 1",
    )
    .bind(visitor_id)
    .fetch_optional(&mut *db.read().await?)
    .await?;
    Ok(row.map(|(e,)| e))
}

pub async fn of_conversation(db: &Db, conversation_id: &str) -> Result<Vec<Lead>, DbError> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM leads WHERE conversation_id = $1 ORDER BY created_at"))
        .bind(conversation_id)
        .fetch_all(&mut *db.read().await?)
        .await
}

/// One page of leads, newest first, and how many there are.
pub async fn page(
    db: &Db,
    status: Option<&str>,
    visible_to: Option<&str>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Lead>, i64), DbError> {
    let filters = format!("WHERE ($1 IS NULL OR status = $1) AND {}", seen(2));
    let rows = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM leads {filters} ORDER BY created_at DESC, id LIMIT $3 OFFSET $4"
    ))
    .bind(status)
    .bind(visible_to)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *db.read().await?)
    .await?;
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM leads {filters}"))
        .bind(status)
        .bind(visible_to)
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok((rows, total))
}

/// The leads whose conversation the console user `$n` may see (issue 43: as the inbox).
pub(crate) fn seen(n: usize) -> String {
    format!(
        "(${n} IS NULL OR EXISTS (SELECT 1 FROM conversations c WHERE c.id = leads.conversation_id AND {}))",
        super::console::visible(n)
    )
}

/// Every lead that `visible_to` may see (CSV export), newest first.
pub async fn all(db: &Db, status: Option<&str>, visible_to: Option<&str>) -> Result<Vec<Lead>, DbError> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM leads WHERE ($1 IS NULL OR status = $1) AND {} ORDER BY created_at DESC, id",
        seen(2)
    ))
    .bind(status)
    .bind(visible_to)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// The conversation of a lead, if there is such a lead.
pub async fn conversation_of(db: &Db, id: &str) -> Result<Option<String>, DbError> {
    sqlx::query_scalar("SELECT conversation_id FROM leads WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// Changes a lead's status and notes.
pub async fn update(db: &Db, id: &str, status: &str, notes: &str, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query("UPDATE leads SET status = $2, notes = $3, updated_at = $4 WHERE id = $1")
        .bind(id)
        .bind(status)
        .bind(notes)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected() == 1)
}
