//! Live conversation channels. Every event of a conversation goes through its channel: the channel
//! numbers it (the SSE `id`), keeps the recent ones in memory and broadcasts them to every open
//! stream of that conversation (the POST that started a turn, a resumed GET, another tab). A
//! channel also holds the conversation's single active-turn slot.
//!
//! A channel keeps an event in memory only until the stream writer has stored it (the writer marks
//! the frame; the next emit lets it go): a burst of answers holds the few events of each that are
//! not yet stored, not whole answers, and a stream that opens later reads the rest from the
//! database ([`super::replay::open`], a page at a time through [`super::frame::stored_page`]).
//!
//! Channels live only while someone holds a [`Lease`]; the last lease to go removes it. Whoever
//! emits events must flush them to the database before dropping its lease, so that a later channel
//! for the same conversation continues the numbering from what is stored.
//!
//! With replicas on one PostgreSQL (see [`Replicas`]), a process numbers a conversation's events
//! only while it holds the conversation's slot in the database ([`Lease::hold_slot`]); it gives the
//! slot back through the stream writer after those events, so the next holder, on any process,
//! continues from what is stored. The channels of other processes learn of new stored events from
//! a notification and relay them to their subscribers ([`Hub::catch_up`]).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use parley_protocol::StreamEvent;
use tokio::sync::{Notify, OnceCell, broadcast};
use tokio_util::sync::CancellationToken;

use crate::store::{self, Db, DbError};

mod slot;

pub use super::frame::Frame;
pub use slot::Replicas;
use slot::Slot;

/// Events kept in memory per channel, at most, while they wait to be stored.
const RECENT: usize = 4096;
/// Live events buffered per subscriber before it has to catch up from `recent`.
const BROADCAST: usize = 128;

/// The turn a conversation is busy with.
#[derive(Debug)]
pub struct ActiveTurn {
    pub message_id: String,
    pub cancel: CancellationToken,
    /// Set once the answer is complete and only the final writes remain.
    pub finishing: bool,
}

struct Inner {
    next_seq: u64,
    /// The last event this channel has had: emitted here, relayed from the database, or stored
    /// before it opened. Events stored by other processes after it are relayed.
    known: u64,
    recent: VecDeque<Arc<Frame>>,
    /// What the conversation's model calls have cost (the ledger's sum once loaded).
    cost_usd: f64,
    /// Room held in the budget for calls under way.
    held_usd: f64,
    /// The cost of the last finished call: the estimate for the next one.
    last_call_usd: f64,
}

impl Inner {
    /// Keeps a new frame, letting go of the stored ones before it.
    fn keep(&mut self, frame: Arc<Frame>) {
        while self.recent.front().is_some_and(|f| f.is_stored()) || self.recent.len() >= RECENT {
            self.recent.pop_front();
        }
        if !frame.is_stored() {
            self.recent.push_back(frame);
        }
    }
}

/// One conversation's channel.
pub struct Channel {
    pub conversation_id: String,
    init: OnceCell<()>,
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Frame>>,
    turn: Mutex<Option<ActiveTurn>>,
    turn_released: Notify,
    slot: Mutex<Slot>,
    /// One claim of the slot in the database at a time.
    claiming: tokio::sync::Mutex<()>,
    /// One catch-up from the database at a time.
    catching_up: tokio::sync::Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Channel {
    fn new(conversation_id: String) -> Self {
        let (tx, _) = broadcast::channel(BROADCAST);
        Channel {
            conversation_id,
            init: OnceCell::new(),
            inner: Mutex::new(Inner {
                next_seq: 1,
                known: 0,
                recent: VecDeque::new(),
                cost_usd: 0.0,
                held_usd: 0.0,
                last_call_usd: 0.0,
            }),
            tx,
            turn: Mutex::new(None),
            turn_released: Notify::new(),
            slot: Mutex::new(Slot::default()),
            claiming: tokio::sync::Mutex::new(()),
            catching_up: tokio::sync::Mutex::new(()),
        }
    }

    /// Sends events another process stored to this channel's subscribers: those past the last
    /// number known here, in order.
    fn relay(&self, frames: Vec<Arc<Frame>>) {
        // While this process holds the slot it alone numbers the conversation's events; what
        // another process stored meanwhile (the end it wrote for an answer it took for dead) is
        // not mixed into its numbering.
        if lock(&self.slot).holders > 0 {
            return;
        }
        let mut inner = lock(&self.inner);
        for frame in frames {
            if frame.seq <= inner.known {
                continue;
            }
            inner.known = frame.seq;
            inner.next_seq = inner.next_seq.max(frame.seq + 1);
            inner.keep(frame.clone());
            let _ = self.tx.send(frame);
        }
    }

    /// Numbers the event, keeps it and sends it to every subscriber.
    pub fn emit(&self, event: StreamEvent) -> Arc<Frame> {
        let mut inner = lock(&self.inner);
        let frame = Arc::new(Frame::new(inner.next_seq, event));
        inner.known = inner.next_seq;
        inner.next_seq += 1;
        inner.keep(frame.clone());
        // No subscriber is fine: the event is stored and can be replayed.
        let _ = self.tx.send(frame.clone());
        frame
    }

    /// Sends an event to the live subscribers only (typing indicators).
    pub fn emit_ephemeral(&self, event: StreamEvent) {
        let _ = self.tx.send(Arc::new(Frame::ephemeral(event)));
    }

    /// Recent events after `after` and a receiver for the ones to come, taken atomically.
    pub fn subscribe(&self, after: u64) -> (Vec<Arc<Frame>>, broadcast::Receiver<Arc<Frame>>) {
        let inner = lock(&self.inner);
        let rx = self.tx.subscribe();
        let recent = inner.recent.iter().filter(|f| f.seq > after).cloned().collect();
        (recent, rx)
    }

    /// Recent events after `after` (to catch up a subscriber that lagged).
    pub fn recent_after(&self, after: u64) -> Vec<Arc<Frame>> {
        lock(&self.inner).recent.iter().filter(|f| f.seq > after).cloned().collect()
    }

    /// The last sequence number handed out.
    pub fn last_seq(&self) -> u64 {
        lock(&self.inner).next_seq - 1
    }

    /// The last event this channel has had (see `Inner::known`).
    pub fn known_seq(&self) -> u64 {
        lock(&self.inner).known
    }

    /// What the conversation has cost so far.
    pub fn cost(&self) -> f64 {
        lock(&self.inner).cost_usd
    }

    /// Holds room for one model call in the conversation's budget and returns the amount held.
    /// Refused (with the cost so far) when the budget is spent, or when calls already under way
    /// leave no room for this one: of two calls at the budget's edge only one goes ahead.
    pub fn hold_cost(&self, budget_usd: f64, floor_usd: f64) -> Result<f64, f64> {
        let mut inner = lock(&self.inner);
        let estimate = inner.last_call_usd.max(floor_usd);
        if inner.cost_usd >= budget_usd
            || (inner.held_usd > 0.0 && inner.cost_usd + inner.held_usd + estimate > budget_usd)
        {
            return Err(inner.cost_usd);
        }
        inner.held_usd += estimate;
        Ok(estimate)
    }

    /// Replaces a hold by the call's real cost; returns the conversation's new total.
    pub fn settle_cost(&self, held_usd: f64, cost_usd: f64) -> f64 {
        let mut inner = lock(&self.inner);
        inner.held_usd = (inner.held_usd - held_usd).max(0.0);
        inner.cost_usd += cost_usd;
        if cost_usd > 0.0 {
            inner.last_call_usd = cost_usd;
        }
        inner.cost_usd
    }

    /// Takes the turn slot, or says which turn holds it.
    pub fn try_begin_turn(&self, message_id: String, cancel: CancellationToken) -> Result<(), BusyTurn> {
        let mut slot = lock(&self.turn);
        match slot.as_ref() {
            Some(t) => Err(BusyTurn { message_id: t.message_id.clone(), finishing: t.finishing }),
            None => {
                *slot = Some(ActiveTurn { message_id, cancel, finishing: false });
                Ok(())
            }
        }
    }

    /// Waits until the active turn (if any) ends; true when the slot is free.
    pub async fn wait_turn_released(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.turn_released.notified();
            if lock(&self.turn).is_none() {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return lock(&self.turn).is_none();
            }
        }
    }

    pub fn mark_finishing(&self) {
        if let Some(t) = lock(&self.turn).as_mut() {
            t.finishing = true;
        }
    }

    fn clear_turn(&self) {
        *lock(&self.turn) = None;
        self.turn_released.notify_waiters();
    }

    /// Cancels the active turn unless it is only finishing its writes; returns its message id.
    pub fn cancel_turn(&self) -> Option<String> {
        lock(&self.turn).as_ref().filter(|t| !t.finishing).map(|t| {
            t.cancel.cancel();
            t.message_id.clone()
        })
    }

    pub fn active_turn(&self) -> Option<String> {
        lock(&self.turn).as_ref().map(|t| t.message_id.clone())
    }

    fn idle(&self) -> bool {
        lock(&self.turn).is_none()
    }
}

/// The turn slot was taken.
#[derive(Clone, Debug, PartialEq)]
pub struct BusyTurn {
    pub message_id: String,
    pub finishing: bool,
}

/// All live channels of this process.
#[derive(Clone)]
pub struct Hub {
    db: Db,
    channels: Arc<Mutex<HashMap<String, Arc<Channel>>>>,
    /// Set when other processes may share the database.
    replicas: Option<Arc<Replicas>>,
}

impl Hub {
    /// A hub for one process (SQLite), or with `replicas` for processes sharing PostgreSQL.
    pub fn new(db: Db, replicas: Option<Replicas>) -> Self {
        Hub { db, channels: Arc::new(Mutex::new(HashMap::new())), replicas: replicas.map(Arc::new) }
    }

    /// Relays to the channel's subscribers what other processes stored after its last event.
    pub async fn catch_up(&self, channel: &Channel) -> Result<(), DbError> {
        if channel.init.get().is_none() {
            // Still loading its numbering from the database: its subscribers read from there.
            return Ok(());
        }
        let _one = channel.catching_up.lock().await;
        let frames = super::frame::stored_after(&self.db, &channel.conversation_id, channel.known_seq()).await?;
        channel.relay(frames);
        Ok(())
    }

    /// Every live channel of this process.
    pub fn live(&self) -> Vec<Lease> {
        let map = lock(&self.channels);
        map.values().map(|c| Lease { hub: self.clone(), channel: c.clone() }).collect()
    }

    /// A lease on the conversation's channel; the first one loads the numbering from the
    /// database. `is_new` skips the load for a conversation that has no rows yet.
    pub async fn lease(&self, conversation_id: &str, is_new: bool) -> Result<Lease, DbError> {
        let channel = {
            let mut map = lock(&self.channels);
            map.entry(conversation_id.to_owned())
                .or_insert_with(|| Arc::new(Channel::new(conversation_id.to_owned())))
                .clone()
        };
        let lease = Lease { hub: self.clone(), channel };
        if !is_new {
            let db = &self.db;
            let ch = &lease.channel;
            ch.init
                .get_or_try_init(|| async {
                    let (events, messages) = store::events::stored_seqs(db, conversation_id).await?;
                    let cost = store::usage::conversation_cost(db, conversation_id).await?;
                    let mut inner = lock(&ch.inner);
                    inner.next_seq = inner.next_seq.max(events.max(messages) + 1);
                    inner.known = inner.known.max(events);
                    inner.cost_usd += cost;
                    Ok::<(), DbError>(())
                })
                .await?;
        } else {
            let _ = lease.channel.init.set(());
        }
        Ok(lease)
    }

    /// The channel if it is live in this process.
    pub fn get(&self, conversation_id: &str) -> Option<Lease> {
        let map = lock(&self.channels);
        map.get(conversation_id).map(|c| Lease { hub: self.clone(), channel: c.clone() })
    }

    /// How many channels are live (metrics, tests).
    pub fn live_channels(&self) -> usize {
        lock(&self.channels).len()
    }
}

/// A handle on a live channel; the channel goes away when the last lease is dropped while no
/// turn is running.
pub struct Lease {
    hub: Hub,
    channel: Arc<Channel>,
}

impl std::ops::Deref for Lease {
    type Target = Channel;
    fn deref(&self) -> &Channel {
        &self.channel
    }
}

impl Clone for Lease {
    fn clone(&self) -> Self {
        let _map = lock(&self.hub.channels);
        Lease { hub: self.hub.clone(), channel: self.channel.clone() }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut map = lock(&self.hub.channels);
        // The map and this lease: nobody else holds the channel.
        if Arc::strong_count(&self.channel) == 2
            && self.channel.idle()
            && let Some(existing) = map.get(&self.channel.conversation_id)
            && Arc::ptr_eq(existing, &self.channel)
        {
            map.remove(&self.channel.conversation_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use parley_protocol::Token;

    use super::*;

    fn token(text: &str) -> StreamEvent {
        StreamEvent::Token(Token { text: text.into() })
    }

    fn seqs(frames: &[Arc<Frame>]) -> Vec<u64> {
        frames.iter().map(|f| f.seq).collect()
    }

    #[test]
    fn keeps_only_what_is_not_stored_yet() {
        let channel = Channel::new("c".into());
        let first = channel.emit(token("a"));
        let second = channel.emit(token("b"));
        let third = channel.emit(token("c"));
        assert_eq!(seqs(&channel.recent_after(0)), [1, 2, 3]);
        // Stored out of order: only a stored prefix is let go, at the next emit.
        third.mark_stored();
        first.mark_stored();
        assert_eq!(seqs(&channel.recent_after(0)), [1, 2, 3]);
        channel.emit(token("d"));
        assert_eq!(seqs(&channel.recent_after(0)), [2, 3, 4]);
        second.mark_stored();
        channel.emit(token("e"));
        assert_eq!(seqs(&channel.subscribe(0).0), [4, 5]);
        // Events another process stored are relayed live, not kept.
        channel.relay(vec![Arc::new(Frame::from_store(6, token("f")))]);
        assert_eq!(seqs(&channel.recent_after(0)), [4, 5]);
        assert_eq!(channel.known_seq(), 6);
    }
}
