//! The stream writer: one task that persists visitor turns, events, partial answer text, tool
//! calls, usage and final message states in batched transactions, off the streaming path.
//! Consecutive tokens of a conversation are stored as one row. Turns and flushes are written at
//! once; turns that arrive together are committed together (group commit), which is what keeps
//! thousands of simultaneous first messages fast on SQLite's single writer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parley_widget::protocol::StreamEvent;
use tokio::sync::{mpsc, oneshot};

use super::clock::Clock;
use super::hub::{Frame, Lease};
use crate::server::store::Db;
use crate::server::store::batch::{self, Batch, FinishedMessage};
use crate::server::store::events::{EventRow, TextAppend};
use crate::server::store::messages::NewTurn;
use crate::server::store::tool_calls::ToolCallRecord;
use crate::server::store::usage::UsageRecord;

enum Op {
    Turn(NewTurn, oneshot::Sender<Result<(), String>>),
    /// Keeps a channel alive until the events before it are stored.
    Release(Lease),
    Event {
        conversation_id: Arc<str>,
        message_id: Option<Arc<str>>,
        frame: Arc<Frame>,
    },
    ToolCall(ToolCallRecord),
    Usage(UsageRecord),
    Finish(FinishedMessage),
    Flush(oneshot::Sender<bool>),
}

/// Handle to the writer task.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::UnboundedSender<Op>,
}

impl Writer {
    /// Starts the writer; it writes at most every `interval` unless asked to flush.
    pub fn spawn(db: Db, clock: Arc<dyn Clock>, interval: Duration) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(db, clock, interval, rx));
        Writer { tx }
    }

    /// Commits a visitor turn (with other turns waiting at the same moment).
    pub async fn begin_turn(&self, turn: NewTurn) -> Result<(), String> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Op::Turn(turn, tx)).map_err(|_| "the writer has stopped".to_owned())?;
        rx.await.unwrap_or_else(|_| Err("the writer has stopped".to_owned()))
    }

    /// Drops `lease` once everything sent before it is stored, so the channel outlives its
    /// unstored events (a new channel numbers from what is stored).
    pub fn release(&self, lease: Lease) {
        let _ = self.tx.send(Op::Release(lease));
    }

    /// Stores an event; tokens with a `message_id` also extend that message's partial text.
    pub fn event(&self, conversation_id: &Arc<str>, message_id: Option<&Arc<str>>, frame: Arc<Frame>) {
        let _ = self.tx.send(Op::Event {
            conversation_id: conversation_id.clone(),
            message_id: message_id.cloned(),
            frame,
        });
    }

    pub fn tool_call(&self, record: ToolCallRecord) {
        let _ = self.tx.send(Op::ToolCall(record));
    }

    pub fn usage(&self, record: UsageRecord) {
        let _ = self.tx.send(Op::Usage(record));
    }

    pub fn finish(&self, message: FinishedMessage) {
        let _ = self.tx.send(Op::Finish(message));
    }

    /// Waits until everything sent so far is stored; false if it could not be.
    pub async fn flush(&self) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Op::Flush(tx)).is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }
}

/// The writer's own connection, kept for its lifetime (reacquired after an error).
struct Conn {
    db: Db,
    conn: Option<sqlx::pool::PoolConnection<sqlx::Any>>,
}

impl Conn {
    async fn write(&mut self, batch: &Batch) -> Result<(), crate::server::store::DbError> {
        if self.conn.is_none() {
            self.conn = Some(self.db.writer().acquire().await?);
        }
        let conn = self.conn.as_mut().expect("connection");
        let result = batch::write(conn, self.db.kind(), batch).await;
        if result.is_err() {
            // Give it back to the pool, which checks it, and take a fresh one next time.
            self.conn = None;
        }
        result
    }
}

async fn run(db: Db, clock: Arc<dyn Clock>, interval: Duration, mut rx: mpsc::UnboundedReceiver<Op>) {
    let mut ops: Vec<Op> = Vec::with_capacity(1024);
    let mut conn = Conn { db, conn: None };
    loop {
        if rx.recv_many(&mut ops, 4096).await == 0 {
            return;
        }
        // Gather more for up to `interval`, unless someone waits (a flush or a turn).
        let deadline = tokio::time::Instant::now() + interval;
        while !ops.iter().any(|o| matches!(o, Op::Flush(_) | Op::Turn(..))) && ops.len() < 8192 {
            match tokio::time::timeout_at(deadline, rx.recv_many(&mut ops, 4096)).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let Built { mut batch, waiters, turn_waiters, releases } = build(std::mem::take(&mut ops), clock.now_ms());
        let mut ok = conn.write(&batch).await.is_ok();
        if ok {
            for w in turn_waiters {
                let _ = w.send(Ok(()));
            }
        } else {
            // Find the turn that cannot be stored (each alone), then retry the rest.
            for (turn, w) in batch.turns.drain(..).zip(turn_waiters) {
                let single = Batch { turns: vec![turn], ..Batch::default() };
                let _ = w.send(conn.write(&single).await.map_err(|e| {
                    tracing::warn!(error = %e, "a visitor turn could not be stored");
                    "could not store the message".to_owned()
                }));
            }
            for attempt in 0..3u32 {
                match conn.write(&batch).await {
                    Ok(()) => {
                        ok = true;
                        break;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, attempt, "stream writer could not store a batch");
                        tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt + 1))).await;
                    }
                }
            }
        }
        for w in waiters {
            let _ = w.send(ok);
        }
        drop(releases);
    }
}

struct Built {
    batch: Batch,
    waiters: Vec<oneshot::Sender<bool>>,
    turn_waiters: Vec<oneshot::Sender<Result<(), String>>>,
    releases: Vec<Lease>,
}

/// Turns queued operations into one batch, joining consecutive tokens of a conversation.
fn build(ops: Vec<Op>, now: i64) -> Built {
    let mut batch = Batch::default();
    let mut waiters = Vec::new();
    let mut turn_waiters = Vec::new();
    let mut releases = Vec::new();
    // Open token run per conversation: (row index, texts).
    let mut runs: HashMap<Arc<str>, (usize, Vec<String>)> = HashMap::new();
    let mut appends: Vec<TextAppend> = Vec::new();
    let mut append_index: HashMap<Arc<str>, usize> = HashMap::new();

    let close = |runs: &mut HashMap<Arc<str>, (usize, Vec<String>)>, batch: &mut Batch, conv: &Arc<str>| {
        if let Some((index, texts)) = runs.remove(conv) {
            batch.events[index].data = serde_json::to_string(&texts).unwrap_or_else(|_| "[]".into());
        }
    };

    for op in ops {
        match op {
            Op::Event { conversation_id, message_id, frame } => {
                if let StreamEvent::Token(token) = &frame.event {
                    if let Some(id) = &message_id {
                        match append_index.get(id) {
                            Some(&i) => appends[i].text.push_str(&token.text),
                            None => {
                                append_index.insert(id.clone(), appends.len());
                                appends.push(TextAppend { message_id: id.to_string(), text: token.text.clone() });
                            }
                        }
                    }
                    if let Some((index, texts)) = runs.get_mut(&conversation_id) {
                        if batch.events[*index].last_seq + 1 == frame.seq {
                            batch.events[*index].last_seq = frame.seq;
                            texts.push(token.text.clone());
                            continue;
                        }
                    }
                    close(&mut runs, &mut batch, &conversation_id);
                    runs.insert(conversation_id.clone(), (batch.events.len(), vec![token.text.clone()]));
                    batch.events.push(EventRow {
                        conversation_id: conversation_id.to_string(),
                        seq: frame.seq,
                        last_seq: frame.seq,
                        name: "token".into(),
                        data: String::new(),
                        created_at: now,
                    });
                } else {
                    close(&mut runs, &mut batch, &conversation_id);
                    batch.events.push(EventRow {
                        conversation_id: conversation_id.to_string(),
                        seq: frame.seq,
                        last_seq: frame.seq,
                        name: frame.event.name().to_owned(),
                        data: frame.event.data_json(),
                        created_at: now,
                    });
                }
            }
            Op::ToolCall(r) => batch.tool_calls.push(r),
            Op::Usage(r) => batch.usage.push(r),
            Op::Finish(f) => batch.finished.push(f),
            Op::Flush(w) => waiters.push(w),
            Op::Turn(turn, w) => {
                batch.turns.push(turn);
                turn_waiters.push(w);
            }
            Op::Release(lease) => releases.push(lease),
        }
    }
    let open: Vec<Arc<str>> = runs.keys().cloned().collect();
    for conv in open {
        close(&mut runs, &mut batch, &conv);
    }
    batch.appends = appends;
    Built { batch, waiters, turn_waiters, releases }
}

/// Expands a stored row back into numbered events.
pub fn expand(row: &EventRow) -> Vec<(u64, StreamEvent)> {
    if row.name == "token" {
        let texts: Vec<String> = serde_json::from_str(&row.data).unwrap_or_default();
        return texts
            .into_iter()
            .enumerate()
            .map(|(i, text)| (row.seq + i as u64, StreamEvent::Token(parley_widget::protocol::Token { text })))
            .collect();
    }
    match StreamEvent::parse(&row.name, &row.data) {
        Ok(Some(event)) => vec![(row.seq, event)],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use parley_widget::protocol::{MessageEnd, MessageStatus, Token};

    use super::*;

    fn ev(conv: &Arc<str>, msg: &Arc<str>, seq: u64, event: StreamEvent) -> Op {
        Op::Event {
            conversation_id: conv.clone(),
            message_id: Some(msg.clone()),
            frame: Arc::new(Frame::new(seq, event)),
        }
    }

    fn token(t: &str) -> StreamEvent {
        StreamEvent::Token(Token { text: t.into() })
    }

    #[test]
    fn joins_consecutive_tokens_per_conversation() {
        let a: Arc<str> = "a".into();
        let b: Arc<str> = "b".into();
        let ma: Arc<str> = "ma".into();
        let mb: Arc<str> = "mb".into();
        let ops = vec![
            ev(&a, &ma, 1, token("He")),
            ev(&b, &mb, 1, token("你")),
            ev(&a, &ma, 2, token("llo")),
            ev(&b, &mb, 2, token("好")),
            ev(
                &a,
                &ma,
                3,
                StreamEvent::MessageEnd(MessageEnd { message_id: "ma".into(), status: MessageStatus::Complete }),
            ),
            ev(&a, &ma, 4, token("x")),
        ];
        let batch = build(ops, 0).batch;
        let rows: Vec<_> = batch
            .events
            .iter()
            .map(|r| (r.conversation_id.as_str(), r.seq, r.last_seq, r.name.as_str(), r.data.as_str()))
            .collect();
        assert_eq!(
            rows,
            vec![
                ("a", 1, 2, "token", "[\"He\",\"llo\"]"),
                ("b", 1, 2, "token", "[\"你\",\"好\"]"),
                ("a", 3, 3, "message_end", "{\"message_id\":\"ma\",\"status\":\"complete\"}"),
                ("a", 4, 4, "token", "[\"x\"]"),
            ]
        );
        assert_eq!(batch.appends[0].text, "Hellox");
        assert_eq!(batch.appends[1].text, "你好");
        let expanded = expand(&batch.events[0]);
        assert_eq!(expanded, vec![(1, token("He")), (2, token("llo"))]);
    }
}
