//! Alerts (issue 41): an agent's daily spending cap reached, its provider's quota exhausted. Each
//! is raised once per agent, kind and UTC day: the first raise writes the row, the webhook event
//! (`agent.cap_reached`, `provider.quota_exhausted`) and a mail to every administrator, in one
//! transaction; later raises that day change nothing.

use serde_json::{Value, json};

use super::{Db, DbError};

/// The kinds of alert, by their webhook event.
pub const CAP_REACHED: &str = "agent.cap_reached";
pub const QUOTA_EXHAUSTED: &str = "provider.quota_exhausted";

crate::store::row_struct! {
    /// An alert as the dashboard lists it.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Alert {
        pub agent_id: String,
        pub kind: String,
        pub detail: String,
        pub created_at: i64,
    }
}

/// Raises `kind` for the agent today (UTC, of `now`); `true` when this was the first time today
/// (and the event and the mail were queued). `detail` is for people (the dashboard, the mail);
/// `data` goes in the event.
pub async fn raise(db: &Db, agent_id: &str, kind: &str, detail: &str, data: Value, now: i64) -> Result<bool, DbError> {
    let day = now.div_euclid(86_400_000);
    let mut tx = db.begin_write().await?;
    let done = sqlx::query(
        "INSERT INTO alerts (agent_id, kind, day, detail, created_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (agent_id, kind, day) DO NOTHING",
    )
    .bind(agent_id)
    .bind(kind)
    .bind(day)
    .bind(detail)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    let data = json!({"detail": detail, "data": data});
    super::webhooks::emit(&mut tx, agent_id, kind, None, data.clone(), now).await?;
    let (name, language, greeting): (String, String, String) =
        sqlx::query_as("SELECT name, language, greeting FROM agents WHERE id = $1")
            .bind(agent_id)
            .fetch_optional(&mut *tx)
            .await?
            .unwrap_or_default();
    let lang = crate::mail_text::lang_of(&language, &greeting);
    if let Some((kind, subject, text, html)) = crate::mail_text::notification(kind, lang, &name, &data) {
        let admins: Vec<(String,)> =
            sqlx::query_as("SELECT email FROM users WHERE role = 'admin' ORDER BY email").fetch_all(&mut *tx).await?;
        for (to,) in admins {
            let mail = super::mail::Mail {
                to,
                subject: subject.clone(),
                text: text.clone(),
                html: html.clone(),
                kind,
                conversation_id: None,
                reply_to: None,
            };
            super::mail::enqueue_in(&mut tx, &mail, now).await?;
        }
    }
    tx.commit().await?;
    Ok(true)
}

/// Alerts raised since `since` (ms), newest first.
pub async fn since(db: &Db, since: i64) -> Result<Vec<Alert>, DbError> {
    sqlx::query_as(
        "SELECT agent_id, kind, detail, created_at FROM alerts WHERE created_at >= $1 ORDER BY created_at DESC LIMIT 50",
    )
    .bind(since)
    .fetch_all(&mut *db.read().await?)
    .await
}
