//! Payment orders. Amounts come from the server's price table only; an order is created at most
//! once per idempotency key (the answer it was made in plus what was ordered). Also what protects
//! them: the ids of webhook calls already accepted (`payment_webhooks`) and the key that signs pay
//! links (`payment_keys`).

use super::{Db, DbError, webhooks};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

crate::store::row_struct! {
    #[derive(Clone, Debug, PartialEq, serde::Serialize)]
    pub struct Order {
        pub id: String,
        pub agent_id: String,
        pub conversation_id: String,
        pub visitor_id: String,
        pub message_id: String,
        pub service_type: String,
        pub category: String,
        pub amount_minor: i64,
        pub currency: String,
        pub method: String,
        /// `pending`, `paid` or `expired`.
        pub status: String,
        pub provider: String,
        pub pay_url: String,
        pub created_at: i64,
        pub expires_at: i64,
        pub paid_at: Option<i64>,
        /// The assessment facts collected in the conversation when the order was made (JSON object).
        pub facts: Option<String>,
    }
}

const COLUMNS: &str = "id, agent_id, conversation_id, visitor_id, message_id, service_type, category, amount_minor, \
    currency, method, status, provider, pay_url, created_at, expires_at, paid_at, facts";

/// Stores the order unless one with the same key exists; returns the stored order either way.
pub async fn create_once(db: &Db, order: &Order, idempotency_key: &str) -> Result<Order, DbError> {
    if let Some(existing) = by_key(db, idempotency_key).await? {
        return Ok(existing);
    }
    let inserted = sqlx::query(
        "INSERT INTO orders (id, agent_id, conversation_id, visitor_id, message_id, service_type, category, amount_minor, \
         currency, method, status, provider, pay_url, idempotency_key, created_at, expires_at, paid_at, updated_at, \
         facts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, NULL, $15, $17)",
    )
    .bind(&order.id)
    .bind(&order.agent_id)
    .bind(&order.conversation_id)
    .bind(&order.visitor_id)
    .bind(&order.message_id)
    .bind(&order.service_type)
    .bind(&order.category)
    .bind(order.amount_minor)
    .bind(&order.currency)
    .bind(&order.method)
    .bind(&order.status)
    .bind(&order.provider)
    .bind(&order.pay_url)
    .bind(idempotency_key)
    .bind(order.created_at)
    .bind(order.expires_at)
    .bind(&order.facts)
    .execute(db.writer())
    .await;
    match inserted {
        Ok(_) => Ok(order.clone()),
        // Two calls raced: the other one's order stands.
        Err(e) => by_key(db, idempotency_key).await?.ok_or(e),
    }
}

pub async fn by_key(db: &Db, key: &str) -> Result<Option<Order>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM orders WHERE idempotency_key = $1");
    sqlx::query_as(&sql).bind(key).fetch_optional(&mut *db.read().await?).await
}

pub async fn by_id(db: &Db, id: &str) -> Result<Option<Order>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM orders WHERE id = $1");
    sqlx::query_as(&sql).bind(id).fetch_optional(&mut *db.read().await?).await
}

/// Marks a pending, unexpired order paid. False when it was not pending or has expired.
pub async fn mark_paid(db: &Db, id: &str, now: i64) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    let paid = pay(&mut tx, id, now).await?;
    tx.commit().await?;
    Ok(paid)
}

/// Marks the order paid inside `tx` and reports it to the agent's webhooks (`order.paid`).
async fn pay(tx: &mut Tx<'_>, id: &str, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE orders SET status = 'paid', paid_at = $2, updated_at = $2 \
         WHERE id = $1 AND status = 'pending' AND expires_at > $2",
    )
    .bind(id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    let order: Order =
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM orders WHERE id = $1")).bind(id).fetch_one(&mut **tx).await?;
    report(tx, &order, "order.paid", now).await?;
    Ok(true)
}

/// `order.paid` or `order.expired` for the order's agent.
async fn report(tx: &mut Tx<'_>, order: &Order, event: &str, now: i64) -> Result<(), DbError> {
    let data = serde_json::json!({
        "conversation_id": order.conversation_id,
        "visitor_id": order.visitor_id,
        "order": {
            "id": order.id,
            "service_type": order.service_type,
            "category": order.category,
            "amount_minor": order.amount_minor,
            "currency": order.currency,
            "method": order.method,
            "status": order.status,
            "provider": order.provider,
            "created_at": webhooks::iso_time(order.created_at),
            "expires_at": webhooks::iso_time(order.expires_at),
            "paid_at": order.paid_at.map(webhooks::iso_time),
        },
    });
    webhooks::emit(tx, &order.agent_id, event, Some(&order.conversation_id), data, now).await?;
    Ok(())
}

/// Expires every pending order whose time is up (each with its `order.expired` webhook); returns
/// them.
pub async fn expire_due(db: &Db, now: i64) -> Result<Vec<Order>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM orders WHERE status = 'pending' AND expires_at <= $1");
    let due: Vec<Order> = sqlx::query_as(&sql).bind(now).fetch_all(&mut *db.read().await?).await?;
    let mut expired = Vec::with_capacity(due.len());
    for mut order in due {
        let mut tx = db.begin_write().await?;
        let done = sqlx::query(
            "UPDATE orders SET status = 'expired', updated_at = $2 WHERE id = $1 AND status = 'pending' AND expires_at <= $2",
        )
        .bind(&order.id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 1 {
            order.status = "expired".into();
            report(&mut tx, &order, "order.expired", now).await?;
            tx.commit().await?;
            expired.push(order);
        } else {
            tx.rollback().await?;
        }
    }
    Ok(expired)
}

/// Orders made in a conversation.
pub async fn of_conversation(db: &Db, conversation_id: &str) -> Result<Vec<Order>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM orders WHERE conversation_id = $1 ORDER BY created_at");
    sqlx::query_as(&sql).bind(conversation_id).fetch_all(&mut *db.read().await?).await
}

/// What a verified webhook call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebhookApplied {
    /// A call with this id was accepted before: nothing changed.
    Replayed,
    /// Recorded; `paid` is true when it marked a pending, unexpired order paid.
    Recorded { paid: bool },
}

/// Records webhook call `webhook_id` about `order_id` and, when it says `paid`, marks the order
/// paid — both or neither. A call id already recorded changes nothing.
pub async fn apply_webhook(
    db: &Db,
    webhook_id: &str,
    order_id: &str,
    paid: bool,
    now: i64,
) -> Result<WebhookApplied, DbError> {
    let mut tx = db.begin_write().await?;
    let recorded = sqlx::query(
        "INSERT INTO payment_webhooks (id, order_id, received_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
    )
    .bind(webhook_id)
    .bind(order_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if recorded.rows_affected() != 1 {
        tx.rollback().await?;
        return Ok(WebhookApplied::Replayed);
    }
    let changed = paid && pay(&mut tx, order_id, now).await?;
    tx.commit().await?;
    Ok(WebhookApplied::Recorded { paid: changed })
}

/// Forgets webhook call ids received before `cutoff` (long past the replay window).
pub async fn forget_webhooks_before(db: &Db, cutoff: i64) -> Result<u64, DbError> {
    let done =
        sqlx::query("DELETE FROM payment_webhooks WHERE received_at < $1").bind(cutoff).execute(db.writer()).await?;
    Ok(done.rows_affected())
}

/// The key that signs pay links: the stored one, or `fresh` stored now when there is none yet
/// (two servers starting at once agree on whichever was stored first).
pub async fn link_key(db: &Db, fresh: &[u8], now: i64) -> Result<Vec<u8>, DbError> {
    sqlx::query(
        "INSERT INTO payment_keys (name, secret, created_at) VALUES ('pay_link', $1, $2) ON CONFLICT (name) DO NOTHING",
    )
    .bind(hex::encode(fresh))
    .bind(now)
    .execute(db.writer())
    .await?;
    let stored: String =
        sqlx::query_scalar("SELECT secret FROM payment_keys WHERE name = 'pay_link'").fetch_one(db.writer()).await?;
    hex::decode(stored).map_err(|e| DbError::Decode(Box::new(e)))
}
