//! The mail outbox (issue 17): messages written with the change they report (or when a visitor
//! asks for their transcript), sent at least once by any process, retried like webhooks.

use super::{Db, DbError, new_id};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

/// What operators can be mailed about.
pub const NOTIFICATIONS: [&str; 4] = ["waiting_human", "lead", "order_paid", "daily_summary"];

/// A message to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: String,
    pub kind: &'static str,
    pub conversation_id: Option<String>,
    /// The Reply-To address (a return mail's inbound address).
    pub reply_to: Option<String>,
}

async fn insert<'e, E: sqlx::Executor<'e, Database = sqlx::Any>>(db: E, mail: &Mail, now: i64) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO mail_outbox (id, to_address, subject, text_body, html_body, kind, conversation_id, status, \
         attempts, next_attempt_at, created_at, reply_to) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $8, $8, $9)",
    )
    .bind(new_id())
    .bind(&mail.to)
    .bind(&mail.subject)
    .bind(&mail.text)
    .bind(&mail.html)
    .bind(mail.kind)
    .bind(mail.conversation_id.as_deref())
    .bind(now)
    .bind(mail.reply_to.as_deref())
    .execute(db)
    .await?;
    Ok(())
}

/// Queues `mail` inside `tx` (the change's own transaction).
pub async fn enqueue_in(tx: &mut Tx<'_>, mail: &Mail, now: i64) -> Result<(), DbError> {
    insert(&mut **tx, mail, now).await
}

/// Queues `mail` on its own.
pub async fn enqueue(db: &Db, mail: &Mail, now: i64) -> Result<(), DbError> {
    insert(db.writer(), mail, now).await
}

/// An operator hears of one conversation at most once per kind in this interval (10 minutes).
pub const NOTIFY_INTERVAL_MS: i64 = 10 * 60_000;

/// Whether a mail of `kind` about `conversation_id` was queued for `to` since `since`.
pub async fn sent_lately_in(
    tx: &mut Tx<'_>,
    to: &str,
    kind: &str,
    conversation_id: &str,
    since: i64,
) -> Result<bool, DbError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM mail_outbox WHERE conversation_id = $1 AND kind = $2 AND to_address = $3 \
         AND created_at >= $4",
    )
    .bind(conversation_id)
    .bind(kind)
    .bind(to)
    .bind(since)
    .fetch_one(&mut **tx)
    .await?;
    Ok(n > 0)
}

/// `(name, email)` of the console users mailed about `notification`.
pub async fn recipients_in(tx: &mut Tx<'_>, notification: &str) -> Result<Vec<(String, String)>, DbError> {
    sqlx::query_as("SELECT name, email FROM users WHERE notify_events LIKE $1 ORDER BY email")
        .bind(format!("%,{notification},%"))
        .fetch_all(&mut **tx)
        .await
}

/// `(name, email)` of the console users mailed about `notification`, outside a transaction.
pub async fn recipients(db: &Db, notification: &str) -> Result<Vec<(String, String)>, DbError> {
    sqlx::query_as("SELECT name, email FROM users WHERE notify_events LIKE $1 ORDER BY email")
        .bind(format!("%,{notification},%"))
        .fetch_all(&mut *db.read().await?)
        .await
}

/// What a user is mailed about.
pub async fn notifications_of(db: &Db, user_id: &str) -> Result<Vec<String>, DbError> {
    let row: Option<(String,)> = sqlx::query_as("SELECT notify_events FROM users WHERE id = $1")
        .bind(user_id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.map(|(e,)| e.split(',').filter(|e| !e.is_empty()).map(str::to_owned).collect()).unwrap_or_default())
}

/// Sets what a user is mailed about (names from [`NOTIFICATIONS`]).
pub async fn set_notifications(db: &Db, user_id: &str, events: &[&str]) -> Result<(), DbError> {
    let stored = if events.is_empty() { String::new() } else { format!(",{},", events.join(",")) };
    sqlx::query("UPDATE users SET notify_events = $2 WHERE id = $1")
        .bind(user_id)
        .bind(stored)
        .execute(db.writer())
        .await?;
    Ok(())
}

crate::store::row_struct! {
    /// A message claimed for sending.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DueMail {
        pub id: String,
        pub to_address: String,
        pub subject: String,
        pub text_body: String,
        pub html_body: String,
        pub attempts: i64,
        pub reply_to: Option<String>,
    }
}

/// Locks up to `limit` messages due at `now` for `lease_ms` (see the webhooks' `claim_due`).
pub async fn claim_due(db: &Db, by: &str, now: i64, lease_ms: i64, limit: i64) -> Result<Vec<DueMail>, DbError> {
    // Most ticks find nothing: a read first, so that an idle server does not write every second.
    let any: Option<(String,)> =
        sqlx::query_as("SELECT id FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= $1 LIMIT 1")
            .bind(now)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    if any.is_none() {
        return Ok(Vec::new());
    }
    sqlx::query_as(
        "UPDATE mail_outbox SET locked_until = $1, locked_by = $2 \
         WHERE id IN (SELECT id FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= $3 \
             AND (locked_until IS NULL OR locked_until <= $3) ORDER BY next_attempt_at LIMIT $4) \
         AND status = 'pending' AND (locked_until IS NULL OR locked_until <= $3) \
         RETURNING id, to_address, subject, text_body, html_body, attempts, reply_to",
    )
    .bind(now.saturating_add(lease_ms))
    .bind(by)
    .bind(now)
    .bind(limit)
    .fetch_all(db.writer())
    .await
}

/// Records an attempt: sent (`error` `None`), tried again at `retry_at`, or failed for good.
pub async fn record(db: &Db, id: &str, error: Option<&str>, retry_at: Option<i64>, now: i64) -> Result<(), DbError> {
    let status = match (error, retry_at) {
        (None, _) => "sent",
        (Some(_), Some(_)) => "pending",
        (Some(_), None) => "failed",
    };
    sqlx::query(
        "UPDATE mail_outbox SET status = $2, attempts = attempts + 1, next_attempt_at = $3, locked_until = NULL, \
         locked_by = NULL, last_error = $4, sent_at = CASE WHEN $2 = 'sent' THEN $5 ELSE sent_at END WHERE id = $1",
    )
    .bind(id)
    .bind(status)
    .bind(retry_at.unwrap_or(now))
    .bind(error)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// Mails visitors caused (transcripts and address codes) queued for `to` since `since`.
pub async fn visitor_mail_since(db: &Db, to: &str, since: i64) -> Result<i64, DbError> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM mail_outbox WHERE to_address = $1 AND kind IN ('transcript', 'confirm') \
         AND created_at >= $2",
    )
    .bind(to)
    .bind(since)
    .fetch_one(&mut *db.read().await?)
    .await
}

/// Deletes mail sent or given up before `before` (a transcript's text is not kept longer than
/// needed); how many.
pub async fn prune(db: &Db, before: i64) -> Result<u64, DbError> {
    let done = sqlx::query("DELETE FROM mail_outbox WHERE status <> 'pending' AND created_at < $1")
        .bind(before)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected())
}
