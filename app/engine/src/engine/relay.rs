//! Replicas on one PostgreSQL (issue 14): what happens on one process reaches the others through
//! PostgreSQL's `LISTEN/NOTIFY`, with the database as the source of truth.
//!
//! - Stored events: the stream writer's transaction notifies `parley_events` with the
//!   conversations it stored events of (see `store::batch::notify_stmts`); a process with a live
//!   channel for one of them reads the new events from the database and relays them to its
//!   subscribers (a resumed stream, another tab, the console's transcript).
//! - Things that are not stored: the console's change feed, typing indicators and "stop this
//!   turn" travel on `parley_live` as small JSON messages, gathered and sent by one task.
//!
//! A notification is lost while the listening connection is down. After reconnecting, every live
//! channel catches up from the database, so no stored event is missed; only typing indicators
//! and console hints sent meanwhile are (the console's lists are read afresh on their next event).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parley_protocol::{StreamEvent, Typing};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::Engine;
use super::console::ConsoleEvent;
use crate::store::batch::{EVENTS_CHANNEL, notify_stmt};
use crate::store::{Db, script};

/// The channel of messages that are not stored.
pub const LIVE_CHANNEL: &str = "parley_live";

/// Largest payload of one `parley_live` notification (PostgreSQL's limit is 8,000 bytes).
const LIVE_PAYLOAD: usize = 7_000;

/// Pause before listening again after the connection was lost (then doubling, up to the most).
const RECONNECT_FIRST: Duration = Duration::from_secs(1);
const RECONNECT_MOST: Duration = Duration::from_secs(10);

/// One message for the other processes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Live {
    /// A console feed event (`u`: whom it is for; absent from older replicas' messages).
    Console {
        c: String,
        a: String,
        t: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        u: Option<String>,
    },
    /// Someone is typing (or stopped).
    Typing { c: String, w: String, on: bool },
    /// Stop the conversation's running turn, wherever it runs.
    Cancel { c: String },
    /// Visitor tokens changed (a person deleted): forget every cached one.
    Visitors,
    /// One visitor token changed (identified, signed out): forget it, by its row id.
    VisitorToken { t: String },
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The process that sent it (it ignores its own).
    o: String,
    m: Vec<Live>,
}

/// This process's side of the relay.
pub struct Relay {
    out: mpsc::UnboundedSender<Live>,
    /// Times the listening connection was established.
    connections: AtomicU64,
}

impl Relay {
    /// Starts the task that sends this process's live messages.
    pub fn spawn(db: Db, process_id: String) -> Relay {
        let (out, rx) = mpsc::unbounded_channel();
        tokio::spawn(send_live(db, process_id, rx));
        Relay { out, connections: AtomicU64::new(0) }
    }

    fn send(&self, message: Live) {
        let _ = self.out.send(message);
    }
}

/// Sends what was queued, several messages per notification.
async fn send_live(db: Db, origin: String, mut rx: mpsc::UnboundedReceiver<Live>) {
    let mut queued = Vec::with_capacity(64);
    while rx.recv_many(&mut queued, 256).await > 0 {
        for payload in payloads(&origin, queued.drain(..)) {
            let sent = async {
                let mut conn = db.writer().acquire().await?;
                script::run(&mut conn, db.kind(), &[notify_stmt(LIVE_CHANNEL, payload)]).await
            };
            if let Err(e) = sent.await {
                tracing::warn!(error = %e, "could not notify the other replicas");
            }
        }
    }
}

/// The messages as JSON envelopes of at most [`LIVE_PAYLOAD`] bytes.
fn payloads(origin: &str, messages: impl Iterator<Item = Live>) -> Vec<String> {
    let mut out = Vec::new();
    let mut batch: Vec<Live> = Vec::new();
    let mut size = 0;
    for m in messages {
        let len = serde_json::to_string(&m).map(|s| s.len()).unwrap_or(0);
        if !batch.is_empty() && size + len > LIVE_PAYLOAD {
            out.push(envelope(origin, std::mem::take(&mut batch)));
            size = 0;
        }
        size += len + 1;
        batch.push(m);
    }
    if !batch.is_empty() {
        out.push(envelope(origin, batch));
    }
    out
}

fn envelope(origin: &str, m: Vec<Live>) -> String {
    serde_json::to_string(&Envelope { o: origin.to_owned(), m }).unwrap_or_default()
}

/// The console feed's kinds (the feed carries `&'static str`).
fn console_kind(kind: &str) -> Option<&'static str> {
    [
        "message",
        "reply",
        "status",
        "lead",
        "order",
        "typing",
        "typing_stop",
        "presence",
        "assigned",
        "queue",
        "note",
        "mention",
        "labels",
    ]
    .into_iter()
    .find(|k| *k == kind)
}

impl Engine {
    /// Tells the other processes (none on SQLite).
    pub(crate) fn tell_replicas(&self, message: Live) {
        if let Some(relay) = &self.0.relay {
            relay.send(message);
        }
    }

    /// Console feed events from other processes go to this one's consoles too.
    pub(crate) fn console_to_replicas(&self, event: &ConsoleEvent) {
        self.tell_replicas(Live::Console {
            c: event.conversation_id.clone(),
            a: event.agent_id.clone(),
            t: event.kind.to_owned(),
            u: event.user_id.clone(),
        });
    }

    /// Times this process's listening connection was established (0 on SQLite).
    pub fn relay_connections(&self) -> u64 {
        self.0.relay.as_ref().map_or(0, |r| r.connections.load(Ordering::Relaxed))
    }

    /// Listens for the other processes' notifications until the server stops (PostgreSQL only).
    pub fn spawn_relay(&self) {
        let (Some(url), Some(_)) = (self.db().listen_url(), &self.0.relay) else { return };
        let url = url.to_owned();
        let engine = self.clone();
        tokio::spawn(async move {
            let closing = engine.shutdown_state().streams_closing().clone();
            let mut delay = RECONNECT_FIRST;
            loop {
                let connected = async {
                    let mut listener = sqlx::postgres::PgListener::connect(&url).await?;
                    listener.listen_all([EVENTS_CHANNEL, LIVE_CHANNEL]).await?;
                    Ok::<_, sqlx::Error>(listener)
                };
                let mut listener = tokio::select! {
                    _ = closing.cancelled() => return,
                    l = connected => match l {
                        Ok(l) => l,
                        Err(e) => {
                            tracing::warn!(error = %e, "could not listen for the other replicas; trying again");
                            tokio::select! {
                                _ = closing.cancelled() => return,
                                _ = tokio::time::sleep(delay) => {}
                            }
                            delay = (delay * 2).min(RECONNECT_MOST);
                            continue;
                        }
                    }
                };
                delay = RECONNECT_FIRST;
                let relay = engine.0.relay.as_ref().expect("relay");
                if relay.connections.fetch_add(1, Ordering::Relaxed) > 0 {
                    // Notifications sent while the connection was down are lost: read what was
                    // stored meanwhile.
                    for lease in engine.hub().live() {
                        let hub = engine.hub().clone();
                        tokio::spawn(async move {
                            if let Err(e) = hub.catch_up(&lease).await {
                                tracing::warn!(error = %e, "could not catch up a conversation after reconnecting");
                            }
                        });
                    }
                }
                loop {
                    let next = tokio::select! {
                        _ = closing.cancelled() => return,
                        n = listener.try_recv() => n,
                    };
                    match next {
                        Ok(Some(n)) => engine.on_notification(n.channel(), n.payload()),
                        Ok(None) => {
                            tracing::warn!("the connection listening for other replicas was lost; listening again");
                            break;
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "the connection listening for other replicas failed; listening again");
                            break;
                        }
                    }
                }
                metrics::counter!("parley_relay_reconnects_total").increment(1);
                tokio::select! {
                    _ = closing.cancelled() => return,
                    _ = tokio::time::sleep(delay) => {}
                }
            }
        });
    }

    fn on_notification(&self, channel: &str, payload: &str) {
        if channel == EVENTS_CHANNEL {
            for line in payload.lines() {
                let Some((conversation, seq)) = line.split_once(' ') else { continue };
                let Ok(seq) = seq.parse::<u64>() else { continue };
                // Only channels live here, and only when the events are new to them (a process
                // is also told of what it stored itself).
                let Some(lease) = self.hub().get(conversation) else { continue };
                if lease.known_seq() >= seq {
                    continue;
                }
                let hub = self.hub().clone();
                tokio::spawn(async move {
                    if let Err(e) = hub.catch_up(&lease).await {
                        tracing::warn!(error = %e, "could not relay events stored by another replica");
                    }
                });
            }
            return;
        }
        let Ok(envelope) = serde_json::from_str::<Envelope>(payload) else {
            tracing::warn!("an unreadable notification from another replica was ignored");
            return;
        };
        if envelope.o == self.process_id() {
            return;
        }
        for message in envelope.m {
            match message {
                Live::Console { c, a, t, u } => {
                    if let Some(kind) = console_kind(&t) {
                        let _ = self.console_feed().send(ConsoleEvent::new(&c, &a, kind).for_user(u.as_deref()));
                    }
                }
                Live::Typing { c, w, on } => {
                    if let Some(lease) = self.hub().get(&c) {
                        lease.emit_ephemeral(StreamEvent::Typing(Typing { who: w, active: on }));
                    }
                }
                Live::Cancel { c } => {
                    if let Some(lease) = self.hub().get(&c) {
                        lease.cancel_turn();
                    }
                }
                Live::Visitors => self.forget_visitors(),
                Live::VisitorToken { t } => self.forget_visitor_token(&t),
            }
        }
    }
}

/// The relay of a process sharing PostgreSQL with others.
pub(crate) fn for_db(db: &Db, process_id: &str) -> Option<Arc<Relay>> {
    db.listen_url().map(|_| Arc::new(Relay::spawn(db.clone(), process_id.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_messages_are_split_below_the_notification_limit() {
        let many = (0..500).map(|i| Live::Typing { c: format!("conversation-{i:04}"), w: "visitor".into(), on: true });
        let out = payloads("p1", many);
        assert!(out.len() > 1, "500 messages do not fit one notification");
        let mut seen = 0;
        for p in &out {
            assert!(p.len() <= 8_000, "{} bytes", p.len());
            let e: Envelope = serde_json::from_str(p).unwrap();
            assert_eq!(e.o, "p1");
            seen += e.m.len();
        }
        assert_eq!(seen, 500);
        assert_eq!(console_kind("status"), Some("status"));
        assert_eq!(console_kind("drop table"), None);
    }
}
