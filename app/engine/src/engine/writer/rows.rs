//! From queued operations to the rows of one batch: consecutive tokens of a conversation become
//! one row, and a stored row expands back into its numbered events.

use std::collections::HashMap;
use std::sync::Arc;

use parley_protocol::StreamEvent;

use super::super::frame::Frame;
use super::Op;
use crate::store::batch::Batch;
use crate::store::events::EventRow;

pub(super) struct Built {
    pub(super) batch: Batch,
    pub(super) releases: Vec<Box<dyn Send>>,
    /// The events in the batch, marked stored once it is committed.
    pub(super) frames: Vec<Arc<Frame>>,
}

/// Turns queued operations into one batch, joining consecutive tokens of a conversation.
pub(super) fn build(ops: Vec<Op>, now: i64) -> Built {
    let mut batch = Batch::default();
    let mut releases = Vec::new();
    let mut frames = Vec::new();
    // Open token run per conversation: (row index, texts).
    let mut runs: HashMap<Arc<str>, (usize, Vec<String>)> = HashMap::new();
    let close = |runs: &mut HashMap<Arc<str>, (usize, Vec<String>)>, batch: &mut Batch, conv: &Arc<str>| {
        if let Some((index, texts)) = runs.remove(conv) {
            batch.events[index].data = serde_json::to_string(&texts).unwrap_or_else(|_| "[]".into());
        }
    };
    for op in ops {
        match op {
            Op::Event { conversation_id, frame } => {
                if let StreamEvent::Token(token) = &frame.event {
                    if let Some((index, texts)) = runs.get_mut(&conversation_id)
                        && batch.events[*index].last_seq + 1 == frame.seq
                    {
                        batch.events[*index].last_seq = frame.seq;
                        texts.push(token.text.clone());
                        frames.push(frame);
                        continue;
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
                frames.push(frame);
            }
            Op::ToolCall(r) => batch.tool_calls.push(*r),
            Op::Usage(r) => batch.usage.push(*r),
            Op::Finish(f) => batch.finished.push(*f),
            Op::SlotRelease { conversation_id, token } => batch.slot_releases.push((conversation_id, token)),
            Op::Release(lease) => releases.push(lease),
        }
    }
    let open: Vec<Arc<str>> = runs.keys().cloned().collect();
    for conv in open {
        close(&mut runs, &mut batch, &conv);
    }
    Built { batch, releases, frames }
}

#[cfg(test)]
mod tests {
    use parley_protocol::{MessageEnd, MessageStatus, Token};

    use super::super::super::frame::{Frame, expand};
    use super::*;

    fn ev(conv: &Arc<str>, seq: u64, event: StreamEvent) -> Op {
        Op::Event { conversation_id: conv.clone(), frame: Arc::new(Frame::new(seq, event)) }
    }

    fn token(t: &str) -> StreamEvent {
        StreamEvent::Token(Token { text: t.into() })
    }

    #[test]
    fn joins_consecutive_tokens_per_conversation() {
        let a: Arc<str> = "a".into();
        let b: Arc<str> = "b".into();
        let ops = vec![
            ev(&a, 1, token("He")),
            ev(&b, 1, token("你")),
            ev(&a, 2, token("llo")),
            ev(&b, 2, token("好")),
            ev(&a, 3, StreamEvent::MessageEnd(MessageEnd { message_id: "ma".into(), status: MessageStatus::Complete })),
            ev(&a, 4, token("x")),
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
        let expanded = expand(&batch.events[0]);
        assert_eq!(expanded, vec![(1, token("He")), (2, token("llo"))]);
    }
}
