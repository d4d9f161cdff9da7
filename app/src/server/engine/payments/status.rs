//! Orders changing state after the turn that made them: paid (sandbox page or provider webhook)
//! or expired (a sweeper; the countdown in the widget is only a hint). Each change is announced
//! on the conversation's stream as a `block_update`, so an open widget updates at once.

use parley_widget::protocol::{Block, BlockEvent, PaymentQr, PaymentStatus, StreamEvent};

use crate::server::engine::Engine;
use crate::server::store::orders::{self, Order};
use crate::server::store::{DbError, messages};

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

    /// Expires every order whose 30 minutes are over; returns how many.
    pub async fn expire_orders(&self) -> Result<usize, DbError> {
        let expired = orders::expire_due(self.db(), self.now_ms()).await?;
        for order in &expired {
            self.announce_order(order).await?;
        }
        Ok(expired.len())
    }

    /// Sends the order's block, in its new state, to the conversation's streams.
    async fn announce_order(&self, order: &Order) -> Result<(), DbError> {
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
    }

    /// Background work: expire orders, notice knowledge edited by another server.
    pub fn spawn_background(&self) {
        let engine = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(2));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut n: u64 = 0;
            loop {
                tick.tick().await;
                n += 1;
                if let Err(e) = engine.expire_orders().await {
                    tracing::warn!(error = %e, "expiring orders");
                }
                if n.is_multiple_of(5)
                    && let Err(e) = engine.services().knowledge.refresh_if_changed().await
                {
                    tracing::warn!(error = %e, "refreshing the knowledge index");
                }
            }
        });
    }
}
