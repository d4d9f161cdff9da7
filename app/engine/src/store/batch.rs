//! One transaction of everything the stream writer collected since its last flush.

use parley_protocol::{Block, MessageStatus};

use super::events::EventRow;
use super::messages::NewTurn;
use super::script::{self, Arg, Stmt};
use super::tool_calls::{self, ToolCallRecord};
use super::usage::{self, UsageRecord};
use super::{DbError, DbKind, to_json_text};

/// The final state of an assistant message.
#[derive(Clone, Debug)]
pub struct FinishedMessage {
    pub conversation_id: String,
    pub message_id: String,
    pub content: String,
    pub blocks: Vec<Block>,
    pub status: MessageStatus,
    pub at: i64,
    /// The coordinator's consulting state reported with this answer (stored with it).
    pub consulting_state: Option<String>,
}

/// What a flush writes.
#[derive(Debug, Default)]
pub struct Batch {
    /// Visitor turns waiting to be committed before their model call.
    pub turns: Vec<NewTurn>,
    pub events: Vec<EventRow>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub usage: Vec<UsageRecord>,
    pub finished: Vec<FinishedMessage>,
    /// Conversation slots given back (conversation, token), after the events numbered under them.
    pub slot_releases: Vec<(String, String)>,
}

impl Batch {
    /// Rows in the batch.
    pub fn len(&self) -> usize {
        self.turns.len()
            + self.events.len()
            + self.tool_calls.len()
            + self.usage.len()
            + self.finished.len()
            + self.slot_releases.len()
    }

    /// The batch as batches of one row each, in the order they are written (so a row the
    /// database refuses can be found without losing the others).
    pub fn pieces(self) -> Vec<Batch> {
        let mut out = Vec::with_capacity(self.len());
        out.extend(self.turns.into_iter().map(|t| Batch { turns: vec![t], ..Batch::default() }));
        out.extend(self.events.into_iter().map(|e| Batch { events: vec![e], ..Batch::default() }));
        out.extend(self.tool_calls.into_iter().map(|t| Batch { tool_calls: vec![t], ..Batch::default() }));
        out.extend(self.usage.into_iter().map(|u| Batch { usage: vec![u], ..Batch::default() }));
        out.extend(self.finished.into_iter().map(|f| Batch { finished: vec![f], ..Batch::default() }));
        out.extend(self.slot_releases.into_iter().map(|r| Batch { slot_releases: vec![r], ..Batch::default() }));
        out
    }

    /// What the row is, for a log line (ids only, never content).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        parts.extend(self.turns.iter().map(|t| format!("turn {}", t.visitor_message_id)));
        parts.extend(self.events.iter().map(|e| format!("event {}#{} {}", e.conversation_id, e.seq, e.name)));
        parts.extend(self.tool_calls.iter().map(|t| format!("tool call {}", t.call_id)));
        parts.extend(self.usage.iter().map(|u| format!("usage of {}", u.message_id.as_deref().unwrap_or("-"))));
        parts.extend(self.finished.iter().map(|f| format!("answer {}", f.message_id)));
        parts.extend(self.slot_releases.iter().map(|(c, _)| format!("slot of {c}")));
        parts.join(", ")
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
            && self.events.is_empty()
            && self.tool_calls.is_empty()
            && self.usage.is_empty()
            && self.finished.is_empty()
            && self.slot_releases.is_empty()
    }
}

/// The batch's statements: turns first, final message states last (an answer, its consulting
/// state and the usage rows still queued commit together).
pub fn statements(batch: &Batch) -> Vec<Stmt> {
    let mut out = super::messages::insert_turn_stmts(&batch.turns);
    out.extend(super::events::insert_stmts(&batch.events));
    out.extend(tool_calls::insert_stmts(&batch.tool_calls));
    out.extend(usage::insert_stmts(&batch.usage));
    out.extend(super::spend::settle_stmts(batch.usage.iter().flat_map(|u| u.settles.iter())));
    out.extend(finished_stmts(&batch.finished));
    out.extend(super::slots::release_stmts(&batch.slot_releases));
    out
}

/// Final answers: one statement for the messages and one for their conversations (per 200),
/// not two per answer. Only a streaming answer changes: one recovered as `interrupted` after
/// its process was taken for dead stays so, should that process come back; an answer finished
/// twice in a batch keeps its first end, as when they ran one after the other. A conversation
/// takes its last answer's time and its last consulting state.
fn finished_stmts(finished: &[FinishedMessage]) -> Vec<Stmt> {
    let mut seen = std::collections::HashSet::new();
    let messages = finished
        .iter()
        .filter(|f| seen.insert(f.message_id.as_str()))
        .map(|f| {
            vec![
                Arg::from(&f.message_id),
                Arg::from(&f.content),
                Arg::from(to_json_text(&f.blocks)),
                Arg::from(f.status.as_str()),
                Arg::from(f.at),
            ]
        })
        .collect();
    let mut out = super::update_rows(
        "messages",
        "content = v.column2, blocks = v.column3, status = v.column4, updated_at = v.column5",
        "messages.id = v.column1 AND messages.status = 'streaming'",
        5,
        messages,
        200,
    );
    // (conversation, time, consulting state) in first-finished order, later answers folded in.
    let mut conversations: Vec<(&str, i64, Option<&str>)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for f in finished {
        let state = f.consulting_state.as_deref();
        match index.get(f.conversation_id.as_str()) {
            Some(&i) => {
                let c = &mut conversations[i];
                c.1 = f.at;
                c.2 = state.or(c.2);
            }
            None => {
                index.insert(f.conversation_id.as_str(), conversations.len());
                conversations.push((&f.conversation_id, f.at, state));
            }
        }
    }
    let rows = conversations
        .into_iter()
        .map(|(id, at, state)| vec![Arg::from(id), Arg::from(at), Arg::MaybeText(state.map(str::to_owned))])
        .collect();
    out.extend(super::update_rows(
        "conversations",
        "updated_at = v.column2, consulting_state = COALESCE(v.column3, conversations.consulting_state)",
        "conversations.id = v.column1",
        3,
        rows,
        200,
    ));
    out
}

/// The PostgreSQL channel on which a committed batch names the conversations it stored events of.
pub const EVENTS_CHANNEL: &str = "parley_events";

/// Largest notification payload sent (PostgreSQL's limit is 8,000 bytes).
const NOTIFY_PAYLOAD: usize = 7_000;

/// Statements telling other replicas which conversations have new stored events: lines of
/// `conversation_id last_seq`, several per notification. Sent inside the batch's transaction, so
/// a notification arrives only once its events can be read.
pub fn notify_stmts(batch: &Batch) -> Vec<Stmt> {
    let mut last: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for e in &batch.events {
        let seq = last.entry(e.conversation_id.as_str()).or_insert(0);
        *seq = (*seq).max(e.last_seq);
    }
    let mut out = Vec::new();
    let mut payload = String::new();
    for (conversation, seq) in last {
        let line = format!("{conversation} {seq}\n");
        if payload.len() + line.len() > NOTIFY_PAYLOAD {
            out.push(notify_stmt(EVENTS_CHANNEL, std::mem::take(&mut payload)));
        }
        payload.push_str(&line);
    }
    if !payload.is_empty() {
        out.push(notify_stmt(EVENTS_CHANNEL, payload));
    }
    out
}

/// `pg_notify(channel, payload)` as a statement (wrapped: sqlx's `Any` driver cannot read the
/// `void` that `pg_notify` returns).
pub fn notify_stmt(channel: &str, payload: String) -> Stmt {
    Stmt::new("SELECT COUNT(*) FROM (SELECT pg_notify($1, $2)) AS n", vec![Arg::from(channel), Arg::from(payload)])
}

/// The batch's statements on `kind`, with the notification for other replicas on PostgreSQL.
fn all_statements(kind: DbKind, batch: &Batch) -> Vec<Stmt> {
    let mut stmts = statements(batch);
    if kind == DbKind::Postgres {
        stmts.extend(notify_stmts(batch));
    }
    stmts
}

/// Writes the batch atomically on `conn`.
/// The statements [`write`] (or, `repaired`, [`write_repaired`]) runs, for a connection of one's own.
pub fn statements_to_write(kind: DbKind, batch: &Batch, repaired: bool) -> Vec<Stmt> {
    let mut stmts = all_statements(kind, batch);
    if repaired {
        for s in &mut stmts {
            script::repair(s);
        }
    }
    stmts
}

pub async fn write(conn: &mut sqlx::AnyConnection, kind: DbKind, batch: &Batch) -> Result<(), DbError> {
    script::run(conn, kind, &statements_to_write(kind, batch, false)).await
}

/// Writes the batch with what a database refuses in text taken out: NUL characters (PostgreSQL
/// stores no `\0` in text) become U+FFFD. Used for a row that failed as it was.
pub async fn write_repaired(conn: &mut sqlx::AnyConnection, kind: DbKind, batch: &Batch) -> Result<(), DbError> {
    script::run(conn, kind, &statements_to_write(kind, batch, true)).await
}
