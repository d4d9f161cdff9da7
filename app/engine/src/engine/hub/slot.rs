//! The conversation's slot across processes: while a process holds it in the database it alone
//! numbers the conversation's events and runs its turn (replicas on one PostgreSQL). With one
//! process per database (SQLite) the slot is always granted.

use std::sync::Arc;
use std::time::Duration;

use super::super::clock::Clock;
use super::super::writer::Writer;
use super::{Lease, lock};
use crate::store::{self, DbError};

/// How often a process waiting for another one's slot asks again.
const SLOT_POLL: Duration = Duration::from_millis(25);

/// What a hub needs when other processes share the database (PostgreSQL replicas).
pub struct Replicas {
    /// This process's lease id.
    pub process_id: String,
    /// Gives slots back after the events numbered under them.
    pub writer: Writer,
    pub clock: Arc<dyn Clock>,
    /// A process whose lease is older than this is gone (its slots are free).
    pub lease_ttl: Duration,
}

/// This process's holding of the conversation's slot (replicas).
#[derive(Default)]
pub(super) struct Slot {
    /// Local holders: a turn, an event written outside a turn.
    pub(super) holders: usize,
    /// The token the slot is held under in the database.
    pub(super) token: Option<String>,
}

impl Lease {
    /// Takes the right to number this conversation's events across processes, waiting up to
    /// `wait` for another process to give it up; false if it did not. Whatever the previous holder
    /// numbered is stored by then and is relayed here first, so numbering continues after it.
    /// Always granted to one process per database (SQLite). Give it back with
    /// [`Lease::release_slot`] (a turn's [`Lease::end_turn`] does).
    pub async fn hold_slot(&self, wait: Duration) -> Result<bool, DbError> {
        let Some(replicas) = &self.hub.replicas else { return Ok(true) };
        let ch = &self.channel;
        let _claiming = ch.claiming.lock().await;
        {
            let mut slot = lock(&ch.slot);
            if slot.holders > 0 {
                slot.holders += 1;
                return Ok(true);
            }
        }
        let token = store::new_id();
        let ttl = i64::try_from(replicas.lease_ttl.as_millis()).unwrap_or(i64::MAX);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let live_after = replicas.clock.now_ms().saturating_sub(ttl);
            if store::slots::claim(&self.hub.db, &ch.conversation_id, &replicas.process_id, &token, live_after).await? {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(SLOT_POLL).await;
        }
        let caught_up = async {
            self.hub.catch_up(ch).await?;
            // Calls made on another process count in this conversation's budget.
            let cost = store::usage::conversation_cost(&self.hub.db, &ch.conversation_id).await?;
            let mut inner = lock(&ch.inner);
            inner.cost_usd = inner.cost_usd.max(cost);
            Ok::<(), DbError>(())
        };
        if let Err(e) = caught_up.await {
            replicas.writer.release_slot(&ch.conversation_id, token);
            return Err(e);
        }
        *lock(&ch.slot) = Slot { holders: 1, token: Some(token) };
        Ok(true)
    }

    /// Holds the slot of a conversation not stored yet (its row is written with the slot held);
    /// the token to store, or `None` when no other process shares the database.
    pub fn hold_new_slot(&self) -> Option<String> {
        self.hub.replicas.as_ref()?;
        let mut slot = lock(&self.channel.slot);
        slot.holders += 1;
        Some(slot.token.get_or_insert_with(store::new_id).clone())
    }

    /// Gives back one hold of the slot; the last one gives the slot back in the database, after
    /// the events queued so far.
    pub fn release_slot(&self) {
        let Some(replicas) = &self.hub.replicas else { return };
        let token = {
            let mut slot = lock(&self.channel.slot);
            if slot.holders == 0 {
                return;
            }
            slot.holders -= 1;
            if slot.holders > 0 {
                return;
            }
            slot.token.take()
        };
        if let Some(token) = token {
            replicas.writer.release_slot(&self.channel.conversation_id, token);
        }
    }

    /// Ends the active turn and gives back the slot it held.
    pub fn end_turn(&self) {
        self.channel.clear_turn();
        self.release_slot();
    }
}
