//! Web Push (issue 43, RFC 8030/8291/8292): the browsers each console user subscribed, the push
//! outbox (one row per notification and subscription, written with the notification: see
//! `store::operator_notifications`), and the server's VAPID key pair.

use super::{Db, DbError, new_id};

crate::store::row_struct! {
    /// A browser's push subscription.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Subscription {
        pub id: String,
        pub user_id: String,
        pub endpoint: String,
        /// The browser's P-256 public key (uncompressed point, base64url).
        pub p256dh: String,
        /// Its 16-byte authentication secret (base64url).
        pub auth: String,
        pub created_at: i64,
    }
}

/// Stores a subscription for `user_id`; an endpoint already stored (the same browser subscribing
/// again, or after another user signed in on it) is taken over with the new keys. Its id.
pub async fn subscribe(
    db: &Db,
    user_id: &str,
    endpoint: &str,
    p256dh: &str,
    auth: &str,
    now: i64,
) -> Result<String, DbError> {
    let mut tx = db.begin_write().await?;
    // Its pending pushes were for the previous keys (and maybe another user): dropped with it.
    sqlx::query("DELETE FROM push_subscriptions WHERE endpoint = $1").bind(endpoint).execute(&mut *tx).await?;
    let id = new_id();
    sqlx::query(
        "INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&id)
    .bind(user_id)
    .bind(endpoint)
    .bind(p256dh)
    .bind(auth)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// Deletes the user's subscription of `endpoint`; whether there was one.
pub async fn unsubscribe(db: &Db, user_id: &str, endpoint: &str) -> Result<bool, DbError> {
    let done = sqlx::query("DELETE FROM push_subscriptions WHERE user_id = $1 AND endpoint = $2")
        .bind(user_id)
        .bind(endpoint)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Deletes a subscription the push service no longer knows (404 or 410), with its deliveries.
pub async fn forget(db: &Db, subscription_id: &str) -> Result<(), DbError> {
    sqlx::query("DELETE FROM push_deliveries WHERE subscription_id = $1")
        .bind(subscription_id)
        .execute(db.writer())
        .await?;
    sqlx::query("DELETE FROM push_subscriptions WHERE id = $1").bind(subscription_id).execute(db.writer()).await?;
    Ok(())
}

/// A user's subscriptions, oldest first.
pub async fn of_user(db: &Db, user_id: &str) -> Result<Vec<Subscription>, DbError> {
    sqlx::query_as(
        "SELECT id, user_id, endpoint, p256dh, auth, created_at FROM push_subscriptions WHERE user_id = $1 \
         ORDER BY created_at, id",
    )
    .bind(user_id)
    .fetch_all(&mut *db.read().await?)
    .await
}

crate::store::row_struct! {
    /// A push claimed for sending: the notification (ids only) and where it goes.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DuePush {
        pub notification_id: String,
        pub subscription_id: String,
        pub attempts: i64,
        pub kind: String,
        pub conversation_id: String,
        pub endpoint: String,
        pub p256dh: String,
        pub auth: String,
    }
}

/// Locks up to `limit` pushes due at `now` for `lease_ms` (as the mail outbox does). Pushes whose
/// notification was read meanwhile are skipped, not sent.
pub async fn claim_due(db: &Db, by: &str, now: i64, lease_ms: i64, limit: i64) -> Result<Vec<DuePush>, DbError> {
    // Most ticks find nothing: a read first, so that an idle server does not write every second.
    let any: Option<(String,)> = sqlx::query_as(
        "SELECT notification_id FROM push_deliveries WHERE status = 'pending' AND next_attempt_at <= $1 LIMIT 1",
    )
    .bind(now)
    .fetch_optional(&mut *db.read().await?)
    .await?;
    if any.is_none() {
        return Ok(Vec::new());
    }
    sqlx::query(
        "UPDATE push_deliveries SET status = 'skipped' WHERE status = 'pending' AND notification_id IN \
         (SELECT id FROM operator_notifications WHERE read_at IS NOT NULL)",
    )
    .execute(db.writer())
    .await?;
    let claimed: Vec<(String, String)> = sqlx::query_as(
        "UPDATE push_deliveries SET locked_until = $1, locked_by = $2 \
         WHERE (notification_id, subscription_id) IN (SELECT notification_id, subscription_id FROM push_deliveries \
             WHERE status = 'pending' AND next_attempt_at <= $3 AND (locked_until IS NULL OR locked_until <= $3) \
             ORDER BY next_attempt_at LIMIT $4) \
         AND status = 'pending' AND (locked_until IS NULL OR locked_until <= $3) \
         RETURNING notification_id, subscription_id",
    )
    .bind(now.saturating_add(lease_ms))
    .bind(by)
    .bind(now)
    .bind(limit)
    .fetch_all(db.writer())
    .await?;
    let mut due = Vec::with_capacity(claimed.len());
    for (notification, subscription) in claimed {
        let row: Option<DuePush> = sqlx::query_as(
            "SELECT d.notification_id, d.subscription_id, d.attempts, n.kind, n.conversation_id, s.endpoint, \
             s.p256dh, s.auth FROM push_deliveries d JOIN operator_notifications n ON n.id = d.notification_id \
             JOIN push_subscriptions s ON s.id = d.subscription_id \
             WHERE d.notification_id = $1 AND d.subscription_id = $2",
        )
        .bind(&notification)
        .bind(&subscription)
        .fetch_optional(db.writer())
        .await?;
        due.extend(row);
    }
    Ok(due)
}

/// Records an attempt: sent (`error` `None`), tried again at `retry_at`, or failed for good.
pub async fn record(
    db: &Db,
    due: &DuePush,
    error: Option<&str>,
    retry_at: Option<i64>,
    now: i64,
) -> Result<(), DbError> {
    let status = match (error, retry_at) {
        (None, _) => "sent",
        (Some(_), Some(_)) => "pending",
        (Some(_), None) => "failed",
    };
    sqlx::query(
        "UPDATE push_deliveries SET status = $3, attempts = attempts + 1, next_attempt_at = $4, \
         locked_until = NULL, locked_by = NULL, last_error = $5 WHERE notification_id = $1 AND subscription_id = $2",
    )
    .bind(&due.notification_id)
    .bind(&due.subscription_id)
    .bind(status)
    .bind(retry_at.unwrap_or(now))
    .bind(error)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// The stored VAPID key pair `(public, sealed private)`, if one was made.
pub async fn vapid_keys(db: &Db) -> Result<Option<(String, String)>, DbError> {
    sqlx::query_as("SELECT public_key, private_key FROM vapid_keys WHERE id = 'main'").fetch_optional(db.writer()).await
}

/// Stores a VAPID key pair unless one exists (a replica starting at the same moment may have
/// stored its own first: everyone then reads that one).
pub async fn store_vapid_keys(db: &Db, public: &str, sealed_private: &str, now: i64) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO vapid_keys (id, public_key, private_key, created_at) VALUES ('main', $1, $2, $3) \
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(public)
    .bind(sealed_private)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}
