//! Outbound webhooks (issue 17): an agent's endpoints, the outbox of deliveries and the log of
//! attempts.
//!
//! An event is written with [`emit`] inside the transaction of the change it reports (a lead, a
//! claim, a payment…), one delivery per subscribed endpoint: it exists exactly when the change
//! does. Any process then sends it ([`claim_due`] locks a batch for a while, so two replicas never
//! send the same delivery at once and a crashed sender's batch is taken up again when the lock runs
//! out): delivery is at least once, and the `webhook-id` lets the receiver drop repeats.

use serde_json::{Value, json};

use super::{Db, DbError, new_id};

mod outbox;
pub use outbox::{Attempt, AttemptRow, DeliveryRow, Due, Next, attempts, claim_due, deliveries, prune, record, resend};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

/// Every event an endpoint can subscribe to.
pub const EVENTS: [&str; 12] = [
    "lead.created",
    "conversation.waiting_human",
    "conversation.claimed",
    "conversation.assigned",
    "conversation.labeled",
    "conversation.closed",
    "order.paid",
    "order.expired",
    "answer.rated",
    "conversation.rated",
    "agent.cap_reached",
    "provider.quota_exhausted",
];

crate::store::row_struct! {
    /// An agent's endpoint (never its secret).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Endpoint {
        pub id: String,
        pub agent_id: String,
        pub url: String,
        /// As stored: `,a,b,` (see [`Endpoint::events`]).
        pub events: String,
        pub prefix: String,
        pub enabled: i64,
        pub disabled_reason: Option<String>,
        pub last_success_at: Option<i64>,
        pub created_at: i64,
    }
}

impl Endpoint {
    /// The events it receives.
    pub fn events(&self) -> Vec<String> {
        self.events.split(',').filter(|e| !e.is_empty()).map(str::to_owned).collect()
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled != 0
    }
}

const ENDPOINT_COLUMNS: &str =
    "id, agent_id, url, events, prefix, enabled, disabled_reason, last_success_at, created_at";

fn no_secret_key() -> DbError {
    DbError::Configuration("no secret key to seal or open webhook secrets (see PARLEY_SECRET_KEY)".into())
}

/// Adds an endpoint with a new signing secret (`whsec_…`); returns it and the secret (shown once).
/// `url` must have been checked; `events` are names from [`EVENTS`].
pub async fn create(
    db: &Db,
    agent_id: &str,
    url: &str,
    events: &[String],
    secret: &str,
    now: i64,
) -> Result<Endpoint, DbError> {
    let id = new_id();
    let sealed = db.secrets().ok_or_else(no_secret_key)?.seal(secret, secret_place(&id));
    let endpoint = Endpoint {
        id,
        agent_id: agent_id.to_owned(),
        url: url.to_owned(),
        events: format!(",{},", events.join(",")),
        prefix: secret.chars().take(12).collect(),
        enabled: 1,
        disabled_reason: None,
        last_success_at: None,
        created_at: now,
    };
    sqlx::query(
        "INSERT INTO webhook_endpoints (id, agent_id, url, events, secret, prefix, enabled, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $7)",
    )
    .bind(&endpoint.id)
    .bind(agent_id)
    .bind(url)
    .bind(&endpoint.events)
    .bind(&sealed)
    .bind(&endpoint.prefix)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(endpoint)
}

/// An agent's endpoints, oldest first.
pub async fn of_agent(db: &Db, agent_id: &str) -> Result<Vec<Endpoint>, DbError> {
    sqlx::query_as(&format!(
        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE agent_id = $1 ORDER BY created_at, id"
    ))
    .bind(agent_id)
    .fetch_all(&mut *db.read().await?)
    .await
}

pub async fn by_id(db: &Db, id: &str) -> Result<Option<Endpoint>, DbError> {
    sqlx::query_as(&format!("SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// The endpoint's signing secret, opened.
pub async fn secret(db: &Db, id: &str) -> Result<Option<String>, DbError> {
    let sealed: Option<(String,)> = sqlx::query_as("SELECT secret FROM webhook_endpoints WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    let Some((sealed,)) = sealed else { return Ok(None) };
    let secrets = db.secrets().ok_or_else(no_secret_key)?;
    secrets.open(&sealed, secret_place(id)).map(Some).map_err(|e| DbError::Decode(Box::new(e)))
}

/// Where an endpoint's signing secret is sealed to.
pub(crate) fn secret_place(id: &str) -> crate::secret::Place<'_> {
    crate::secret::Place::new("webhook_endpoints", "secret", id)
}

/// Turns an endpoint on (its waiting deliveries go out again) or off by hand. False: no such
/// endpoint.
pub async fn set_enabled(db: &Db, id: &str, enabled: bool, now: i64) -> Result<bool, DbError> {
    let done =
        sqlx::query("UPDATE webhook_endpoints SET enabled = $2, disabled_reason = NULL, updated_at = $3 WHERE id = $1")
            .bind(id)
            .bind(i64::from(enabled))
            .bind(now)
            .execute(db.writer())
            .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes an endpoint with its deliveries and their attempts. False: no such endpoint.
pub async fn delete(db: &Db, id: &str) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = $1)",
    )
    .bind(id)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM webhook_deliveries WHERE endpoint_id = $1").bind(id).execute(&mut *tx).await?;
    let done = sqlx::query("DELETE FROM webhook_endpoints WHERE id = $1").bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(done.rows_affected() == 1)
}

/// ISO 8601 UTC time of Unix milliseconds (the payloads' `timestamp`).
pub fn iso_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Writes `event` about `data` for every enabled endpoint of the agent that receives it, and the
/// mail of the console users who asked to hear of it, inside `tx` (the change's own
/// transaction). The body is
/// `{"type", "timestamp", "agent": key, "data"}`. Returns how many deliveries it queued.
pub async fn emit(
    tx: &mut Tx<'_>,
    agent_id: &str,
    event: &str,
    conversation_id: Option<&str>,
    data: Value,
    now: i64,
) -> Result<u64, DbError> {
    debug_assert!(EVENTS.contains(&event), "unknown webhook event {event}");
    // A trial conversation (an answer test, the draft's preview) tells no one (migration 0045).
    if let Some(conversation) = conversation_id
        && super::conversations::is_trial(tx, conversation).await?
    {
        return Ok(0);
    }
    let mut data = data;
    // Every event about a conversation carries its labels (by name), read here, in one place.
    if let (Some(conversation), Value::Object(map)) = (conversation_id, &mut data)
        && !map.contains_key("labels")
    {
        map.insert("labels".into(), json!(super::labels::names_in(tx, conversation).await?));
    }
    notify_by_mail(tx, agent_id, event, conversation_id, &data, now).await?;
    let endpoints: Vec<(String,)> = sqlx::query_as(
        "SELECT id FROM webhook_endpoints WHERE agent_id = $1 AND enabled = 1 AND events LIKE $2 ORDER BY id",
    )
    .bind(agent_id)
    .bind(format!("%,{event},%"))
    .fetch_all(&mut **tx)
    .await?;
    if endpoints.is_empty() {
        return Ok(0);
    }
    let key: Option<(String,)> =
        sqlx::query_as("SELECT public_key FROM agents WHERE id = $1").bind(agent_id).fetch_optional(&mut **tx).await?;
    let body = json!({
        "type": event,
        "timestamp": iso_time(now),
        "agent": key.map(|(k,)| k),
        "data": data,
    })
    .to_string();
    for (endpoint,) in &endpoints {
        sqlx::query(
            "INSERT INTO webhook_deliveries (id, endpoint_id, event, conversation_id, payload, status, attempts, \
             next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6)",
        )
        .bind(format!("msg_{}", new_id().replace('-', "")))
        .bind(endpoint)
        .bind(event)
        .bind(conversation_id)
        .bind(&body)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    }
    Ok(endpoints.len() as u64)
}

/// Queues the mail of the console users who asked to hear of `event` (in the agent's language).
async fn notify_by_mail(
    tx: &mut Tx<'_>,
    agent_id: &str,
    event: &str,
    conversation_id: Option<&str>,
    data: &Value,
    now: i64,
) -> Result<(), DbError> {
    use crate::mail_text::{lang_of, notification};
    let kind = match event {
        "conversation.waiting_human" => "waiting_human",
        "lead.created" => "lead",
        "order.paid" => "order_paid",
        _ => return Ok(()),
    };
    let to = super::mail::recipients_in(tx, kind).await?;
    if to.is_empty() {
        return Ok(());
    }
    let agent: Option<(String, String, String)> =
        sqlx::query_as("SELECT name, language, greeting FROM agents WHERE id = $1")
            .bind(agent_id)
            .fetch_optional(&mut **tx)
            .await?;
    let Some((name, language, greeting)) = agent else { return Ok(()) };
    let Some((kind, subject, text, html)) = notification(event, lang_of(&language, &greeting), &name, data) else {
        return Ok(());
    };
    for (_, address) in to {
        // Batched: one mail of a kind per conversation and recipient per interval, however many
        // leads or escalations a visitor sends in it (the console lists them all).
        if let Some(conversation) = conversation_id
            && super::mail::sent_lately_in(tx, &address, kind, conversation, now - super::mail::NOTIFY_INTERVAL_MS)
                .await?
        {
            continue;
        }
        let mail = super::mail::Mail {
            to: address,
            subject: subject.clone(),
            text: text.clone(),
            html: html.clone(),
            kind,
            conversation_id: conversation_id.map(str::to_owned),
            reply_to: None,
        };
        super::mail::enqueue_in(tx, &mail, now).await?;
    }
    Ok(())
}

/// A conversation's agent (for [`emit`] inside a transaction that has only its id).
pub async fn agent_of_conversation(tx: &mut Tx<'_>, conversation_id: &str) -> Result<Option<String>, DbError> {
    let row: Option<(String,)> = sqlx::query_as("SELECT agent_id FROM conversations WHERE id = $1")
        .bind(conversation_id)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.map(|(a,)| a))
}

/// A console user as payloads name them: `{"id", "name", "email"}`.
pub async fn operator(tx: &mut Tx<'_>, user_id: &str) -> Result<Value, DbError> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT name, email FROM users WHERE id = $1").bind(user_id).fetch_optional(&mut **tx).await?;
    Ok(match row {
        Some((name, email)) => json!({"id": user_id, "name": name, "email": email}),
        None => json!({"id": user_id}),
    })
}
