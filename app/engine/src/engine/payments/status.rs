//! Orders changing state after the turn that made them: paid (sandbox page or provider webhook)
//! or expired (a sweeper; the countdown in the widget is only a hint). Each change is announced
//! on the conversation's stream as a `block_update`, so an open widget updates at once.
//!
//! A webhook call is believed only when its provider verified it (signature and time window), its
//! id was never accepted before, and it names the order's own amount and currency.

use parley_protocol::{Block, BlockEvent, PaymentQr, PaymentStatus, StreamEvent};

use super::WebhookError;
use crate::engine::Engine;
use crate::engine::jobs::Job;
use crate::store::orders::{self, Order, WebhookApplied};
use crate::store::{DbError, messages};

/// How long accepted webhook ids are kept (far beyond the 5-minute window), in ms.
const WEBHOOK_IDS_KEPT_MS: i64 = 24 * 60 * 60 * 1000;

/// Why a webhook call was refused; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookFailure {
    #[error("no payment provider takes webhooks on this server")]
    Off,
    #[error(transparent)]
    Invalid(#[from] WebhookError),
    #[error("no order {0}")]
    UnknownOrder(String),
    /// The call's amount or currency is not the order's.
    #[error("the call says {got}, the order is {want}")]
    Mismatch { got: String, want: String },
    /// A call with this id was accepted before.
    #[error("webhook id {0} was already accepted")]
    Replayed(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl Engine {
    /// Marks an order paid if it is still payable. False when unknown, already paid or expired.
    pub async fn order_paid(&self, order_id: &str) -> Result<bool, DbError> {
        if !orders::mark_paid(self.db(), order_id, self.now_ms()).await? {
            return Ok(false);
        }
        if let Some(order) = orders::by_id(self.db(), order_id).await? {
            self.announce_order(&order).await?;
        }
        Ok(true)
    }

    /// A payment provider's webhook call: verified, checked against the order, accepted once.
    /// Returns whether it marked the order paid (false for another status, or an order already
    /// paid or expired).
    pub async fn payment_webhook(&self, headers: &http::HeaderMap, body: &[u8]) -> Result<bool, WebhookFailure> {
        let payments = &self.services().payments;
        let provider = payments.provider.as_ref().filter(|_| payments.webhooks).ok_or(WebhookFailure::Off)?;
        let now = self.now_ms();
        let event = provider.verify_webhook(headers, body, now)?;
        let order = orders::by_id(self.db(), &event.order_id)
            .await?
            .ok_or(WebhookFailure::UnknownOrder(event.order_id.clone()))?;
        if event.amount_minor != order.amount_minor || event.currency != order.currency {
            return Err(WebhookFailure::Mismatch {
                got: format!("{} {}", event.amount_minor, event.currency),
                want: format!("{} {}", order.amount_minor, order.currency),
            });
        }
        match orders::apply_webhook(self.db(), &event.id, &order.id, event.status == "paid", now).await? {
            WebhookApplied::Replayed => Err(WebhookFailure::Replayed(event.id)),
            WebhookApplied::Recorded { paid: false } => Ok(false),
            WebhookApplied::Recorded { paid: true } => {
                if let Some(order) = orders::by_id(self.db(), &order.id).await? {
                    self.announce_order(&order).await?;
                }
                Ok(true)
            }
        }
    }

    /// Expires every order whose 30 minutes are over; returns how many.
    pub async fn expire_orders(&self) -> Result<usize, DbError> {
        let expired = orders::expire_due(self.db(), self.now_ms()).await?;
        for order in &expired {
            self.announce_order(order).await?;
        }
        Ok(expired.len())
    }

    /// Sends the order's block, in its new state, to the conversation's streams (and wakes the
    /// webhook sender: the change queued `order.paid` or `order.expired`).
    async fn announce_order(&self, order: &Order) -> Result<(), DbError> {
        self.wake_outbox();
        let stored = messages::list(self.db(), &order.conversation_id).await?;
        let block = stored
            .iter()
            .find(|m| m.id == order.message_id)
            .and_then(|m| m.blocks.iter().find(|b| b.key() == Some(order.id.as_str())).cloned());
        let Some(Block::PaymentQr(qr)) = block else { return Ok(()) };
        let status = match order.status.as_str() {
            "paid" => PaymentStatus::Paid,
            "expired" => PaymentStatus::Expired,
            _ => PaymentStatus::Pending,
        };
        let block = Block::PaymentQr(PaymentQr { status, ..qr });
        self.emit_now(
            &order.conversation_id,
            StreamEvent::BlockUpdate(BlockEvent { message_id: order.message_id.clone(), block }),
        )
        .await
        .map(drop)
    }

    /// Background work: expire orders and forget webhook ids past keeping (each run once across
    /// replicas, see [`Job`]), and notice knowledge and tools edited by another server (every replica).
    pub fn spawn_background(&self) {
        let engine = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Job::ExpireOrders.tick());
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let per_minute = (Job::ForgetWebhookIds.tick().as_millis() / Job::ExpireOrders.tick().as_millis()).max(1);
            let mut n: u128 = 0;
            loop {
                tick.tick().await;
                n += 1;
                if engine.claim_job(Job::ExpireOrders).await
                    && let Err(e) = engine.expire_orders().await
                {
                    tracing::warn!(error = %e, "expiring orders");
                }
                if n % per_minute == 1
                    && engine.claim_job(Job::ForgetWebhookIds).await
                    && let Err(e) =
                        orders::forget_webhooks_before(engine.db(), engine.now_ms() - WEBHOOK_IDS_KEPT_MS).await
                {
                    tracing::warn!(error = %e, "forgetting old payment webhook ids");
                }
                if n % per_minute == 1
                    && engine.claim_job(Job::PruneOutboxes).await
                    && let Err(e) = engine.prune_outboxes().await
                {
                    tracing::warn!(error = %e, "pruning the webhook and mail outboxes");
                }
                if n % per_minute == 1
                    && engine.mail_enabled()
                    && engine.claim_job(Job::DailySummary).await
                    && let Err(e) = engine.send_daily_summary().await
                {
                    tracing::warn!(error = %e, "queueing the daily summary");
                }
                if n % per_minute == 1
                    && engine.claim_job(Job::Retention).await
                    && let Err(e) = engine.apply_retention().await
                {
                    tracing::warn!(error = %e, "deleting conversations past their retention period");
                }
                if n.is_multiple_of(5)
                    && let Err(e) = engine.services().knowledge.refresh_if_changed().await
                {
                    tracing::warn!(error = %e, "refreshing the knowledge index");
                }
                // A run can take long (an endpoint embedding thousands of chunks): it goes on
                // beside the ticks, one at a time per process.
                if engine.services().knowledge.has_embeddings() && engine.claim_job(Job::EmbedKnowledge).await {
                    let knowledge = engine.services().knowledge.clone();
                    tokio::spawn(async move {
                        if let Err(e) = knowledge.embed_missing().await {
                            tracing::warn!(error = %e, "embedding stored knowledge");
                        }
                    });
                }
                if n.is_multiple_of(5)
                    && let Err(e) = engine.refresh_tools_if_changed().await
                {
                    tracing::warn!(error = %e, "refreshing the owner's tools");
                }
            }
        });
    }
}
