//! The outbox of webhook deliveries: claiming the due ones for sending (one sender per delivery
//! across replicas), recording each attempt and what comes next, the console's views of
//! deliveries and attempts, sending one again, and pruning the old ones.

use super::super::{Db, DbError, new_id};

crate::store::row_struct! {
    /// A delivery claimed for sending.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Due {
        pub id: String,
        pub endpoint_id: String,
        pub url: String,
        pub event: String,
        pub payload: String,
        /// Attempts made before this one.
        pub attempts: i64,
        pub first_attempt_at: Option<i64>,
    }
}

/// Locks up to `limit` deliveries due at `now` (pending, their endpoint enabled, not locked by a
/// live sender) for `lease_ms`, for process `by`; returns them. An endpoint gets at most
/// `per_endpoint` in flight (counting those locked already), its oldest due first, so one slow
/// endpoint cannot take every sender. Of two processes asking at once, each delivery goes to one
/// (the outer condition is checked again on the locked row); the cap per endpoint holds for each
/// claim (two at the same instant may each send up to it).
pub async fn claim_due(
    db: &Db,
    by: &str,
    now: i64,
    lease_ms: i64,
    limit: i64,
    per_endpoint: i64,
) -> Result<Vec<Due>, DbError> {
    // Most ticks find nothing: a read first, so that an idle server does not write every second.
    let any: Option<(String,)> =
        sqlx::query_as("SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $1 LIMIT 1")
            .bind(now)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    if any.is_none() {
        return Ok(Vec::new());
    }
    let claimed: Vec<(String,)> = sqlx::query_as(
        "UPDATE webhook_deliveries SET locked_until = $1, locked_by = $2 \
         WHERE id IN (SELECT r.id FROM (SELECT d.id, d.next_attempt_at, \
                 ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS n, \
                 (SELECT COUNT(*) FROM webhook_deliveries f WHERE f.endpoint_id = d.endpoint_id \
                     AND f.status = 'pending' AND f.locked_until > $3) AS busy \
             FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id \
             WHERE d.status = 'pending' AND d.next_attempt_at <= $3 AND e.enabled = 1 \
             AND (d.locked_until IS NULL OR d.locked_until <= $3)) r \
             WHERE r.n + r.busy <= $5 ORDER BY r.next_attempt_at, r.id LIMIT $4) \
         AND status = 'pending' AND (locked_until IS NULL OR locked_until <= $3) RETURNING id",
    )
    .bind(now.saturating_add(lease_ms))
    .bind(by)
    .bind(now)
    .bind(limit)
    .bind(per_endpoint)
    .fetch_all(db.writer())
    .await?;
    if claimed.is_empty() {
        return Ok(Vec::new());
    }
    let list = super::super::placeholders(1, claimed.len());
    let sql = format!(
        "SELECT d.id, d.endpoint_id, e.url, d.event, d.payload, d.attempts, d.first_attempt_at \
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.id IN {list} \
         ORDER BY d.next_attempt_at, d.id"
    );
    let mut q = sqlx::query_as(&sql);
    for (id,) in &claimed {
        q = q.bind(id);
    }
    q.fetch_all(db.writer()).await
}

/// What one attempt got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The HTTP status, if an answer came.
    pub status: Option<u16>,
    /// Why it failed (`None`: a 2xx answer).
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// What becomes of a delivery after an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    Delivered,
    /// Tried again at this time.
    RetryAt(i64),
    /// No more attempts: `failed`. With a reason, the endpoint is disabled too, unless something
    /// reached it since this delivery's first attempt (`always`: whatever it did before).
    GiveUp {
        disable: Option<String>,
        always: bool,
    },
}

/// Records an attempt of `due` made at `now` and what follows from it, in one transaction.
pub async fn record(db: &Db, due: &Due, attempt: &Attempt, next: &Next, now: i64) -> Result<(), DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "INSERT INTO webhook_attempts (id, delivery_id, at, status, error, duration_ms) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(new_id())
    .bind(&due.id)
    .bind(now)
    .bind(attempt.status.map(i64::from))
    .bind(attempt.error.as_deref())
    .bind(attempt.duration_ms)
    .execute(&mut *tx)
    .await?;
    let (status, next_at) = match next {
        Next::Delivered => ("delivered", now),
        Next::RetryAt(at) => ("pending", *at),
        Next::GiveUp { .. } => ("failed", now),
    };
    sqlx::query(
        "UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, next_attempt_at = $3, \
         locked_until = NULL, locked_by = NULL, first_attempt_at = COALESCE(first_attempt_at, $4), \
         last_attempt_at = $4, last_status = $5, last_error = $6 WHERE id = $1",
    )
    .bind(&due.id)
    .bind(status)
    .bind(next_at)
    .bind(now)
    .bind(attempt.status.map(i64::from))
    .bind(attempt.error.as_deref())
    .execute(&mut *tx)
    .await?;
    match next {
        Next::Delivered => {
            sqlx::query("UPDATE webhook_endpoints SET last_success_at = $2 WHERE id = $1")
                .bind(&due.endpoint_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        Next::GiveUp { disable: Some(reason), always } => {
            let since = if *always { i64::MAX } else { due.first_attempt_at.unwrap_or(now) };
            sqlx::query(
                "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = $2, updated_at = $3 \
                 WHERE id = $1 AND enabled = 1 AND (last_success_at IS NULL OR last_success_at < $4)",
            )
            .bind(&due.endpoint_id)
            .bind(reason)
            .bind(now)
            .bind(since)
            .execute(&mut *tx)
            .await?;
        }
        _ => {}
    }
    tx.commit().await?;
    Ok(())
}

crate::store::row_struct! {
    /// A delivery as the log lists it.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DeliveryRow {
        pub id: String,
        pub event: String,
        pub conversation_id: Option<String>,
        pub status: String,
        pub attempts: i64,
        pub next_attempt_at: i64,
        pub last_attempt_at: Option<i64>,
        pub last_status: Option<i64>,
        pub last_error: Option<String>,
        pub created_at: i64,
        pub payload: String,
    }
}

/// An endpoint's newest deliveries.
pub async fn deliveries(db: &Db, endpoint_id: &str, limit: i64) -> Result<Vec<DeliveryRow>, DbError> {
    sqlx::query_as(
        "SELECT id, event, conversation_id, status, attempts, next_attempt_at, last_attempt_at, last_status, \
         last_error, created_at, payload FROM webhook_deliveries WHERE endpoint_id = $1 \
         ORDER BY created_at DESC, id DESC LIMIT $2",
    )
    .bind(endpoint_id)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// One attempt as the log lists it: `(delivery_id, at, status, error, duration_ms)`.
pub type AttemptRow = (String, i64, Option<i64>, Option<String>, i64);

/// An endpoint's newest attempts.
pub async fn attempts(db: &Db, endpoint_id: &str, limit: i64) -> Result<Vec<AttemptRow>, DbError> {
    sqlx::query_as(
        "SELECT a.delivery_id, a.at, a.status, a.error, a.duration_ms FROM webhook_attempts a \
         JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1 \
         ORDER BY a.at DESC, a.id DESC LIMIT $2",
    )
    .bind(endpoint_id)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Queues a delivery again, now, with a fresh schedule ("send again"). Returns its endpoint, or
/// `None` when there is no such delivery.
pub async fn resend(db: &Db, delivery_id: &str, now: i64) -> Result<Option<String>, DbError> {
    let row: Option<(String,)> = sqlx::query_as(
        "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $2, \
         first_attempt_at = NULL, locked_until = NULL, locked_by = NULL WHERE id = $1 RETURNING endpoint_id",
    )
    .bind(delivery_id)
    .bind(now)
    .fetch_optional(db.writer())
    .await?;
    Ok(row.map(|(e,)| e))
}

/// Deletes finished deliveries (delivered or failed) created before `before`, with their
/// attempts; how many deliveries.
pub async fn prune(db: &Db, before: i64) -> Result<u64, DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries \
         WHERE status <> 'pending' AND created_at < $1)",
    )
    .bind(before)
    .execute(&mut *tx)
    .await?;
    let done = sqlx::query("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1")
        .bind(before)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected())
}
