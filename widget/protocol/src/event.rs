//! Stream events. On the wire each is one SSE frame: `id:` is the conversation's sequence number,
//! `event:` the name below, `data:` the JSON payload. See `docs/protocol.md`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::block::Block;
use super::codes::StreamCode;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Visitor,
    Assistant,
    Operator,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Visitor => "visitor",
            Role::Assistant => "assistant",
            Role::Operator => "operator",
            Role::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "visitor" => Role::Visitor,
            "assistant" => Role::Assistant,
            "operator" => Role::Operator,
            "system" => Role::System,
            _ => return None,
        })
    }
}

/// Lifecycle of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// The answer is being written.
    Streaming,
    Complete,
    /// The server stopped while the answer was being written; the partial text is kept.
    Interrupted,
    /// The visitor pressed stop; the partial text is kept.
    Stopped,
    /// The model could not be reached or failed; the visitor was told.
    Failed,
}

impl MessageStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Streaming => "streaming",
            MessageStatus::Complete => "complete",
            MessageStatus::Interrupted => "interrupted",
            MessageStatus::Stopped => "stopped",
            MessageStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "streaming" => MessageStatus::Streaming,
            "complete" => MessageStatus::Complete,
            "interrupted" => MessageStatus::Interrupted,
            "stopped" => MessageStatus::Stopped,
            "failed" => MessageStatus::Failed,
            _ => return None,
        })
    }
}

/// Progress of one tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    Started,
    Succeeded,
    Failed,
}

impl ToolCallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallStatus::Started => "started",
            ToolCallStatus::Succeeded => "succeeded",
            ToolCallStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "started" => ToolCallStatus::Started,
            "succeeded" => ToolCallStatus::Succeeded,
            "failed" => ToolCallStatus::Failed,
            _ => return None,
        })
    }
}

/// `message_start`: a new message begins; tokens and blocks that follow belong to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageStart {
    pub conversation_id: String,
    pub message_id: String,
    pub role: Role,
}

/// `token`: the next piece of the current assistant message's text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Token {
    pub text: String,
}

/// `tool_call`: a tool call started, succeeded or failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
    pub status: ToolCallStatus,
    /// Which hop of the tool loop (1-based).
    pub hop: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// `block`: a rich block for the current assistant message. `block_update`: a new state of a
/// block already shown (same [`Block::key`]), e.g. a payment that was paid or expired.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockEvent {
    pub message_id: String,
    pub block: Block,
}

/// `usage`: tokens and cost of one upstream call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Usage {
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    pub conversation_cost_usd: f64,
}

/// `state_update`: the conversation's structured state changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateUpdate {
    pub state: Value,
}

/// `agent_start` / `agent_complete`: an expert agent began or finished work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentProgress {
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
}

/// `handoff`: the conversation moved between the bot and a person.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Handoff {
    /// `human` when an operator took over, `bot` when it was handed back, `waiting` when the
    /// visitor asked for a person, `closed` when the conversation was closed.
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_name: Option<String>,
}

/// `operator_message`: a person wrote to the visitor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperatorMessage {
    pub message_id: String,
    pub text: String,
    pub operator_name: String,
}

/// `visitor_message`: the visitor wrote (for the console and the visitor's other tabs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VisitorMessage {
    pub message_id: String,
    pub text: String,
    /// The sender's own id for it (`client_message_id` of the send): the panel that sent it
    /// knows it by this; another tab, device or a mail answer shows it as new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_message_id: Option<String>,
}

/// `typing`: someone is typing (sent without an `id:`, never stored or replayed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Typing {
    /// `visitor` or `operator`.
    pub who: String,
    pub active: bool,
}

/// `message_end`: the message is finished (or stopped, or failed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageEnd {
    pub message_id: String,
    pub status: MessageStatus,
}

/// `error`: something went wrong; `code` is stable, `message` is for people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorEvent {
    pub code: StreamCode,
    pub message: String,
}

macro_rules! stream_events {
    ($($variant:ident($payload:ty) = $name:literal),* $(,)?) => {
        /// One event of a conversation's stream.
        #[derive(Clone, Debug, PartialEq)]
        pub enum StreamEvent {
            $($variant($payload),)*
        }

        impl StreamEvent {
            /// The SSE `event:` name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(StreamEvent::$variant(_) => $name,)*
                }
            }

            /// The SSE `data:` payload as JSON.
            pub fn data_json(&self) -> String {
                let json = match self {
                    $(StreamEvent::$variant(payload) => serde_json::to_string(payload),)*
                };
                // Serializing plain structs of strings and numbers cannot fail.
                json.unwrap_or_else(|_| "{}".to_owned())
            }

            /// Parses an SSE frame. `Ok(None)` for an event name this build does not know.
            pub fn parse(name: &str, data: &str) -> Result<Option<Self>, String> {
                Ok(Some(match name {
                    $($name => StreamEvent::$variant(crate::json::from_str(data)?),)*
                    _ => return Ok(None),
                }))
            }
        }
    };
}

stream_events! {
    MessageStart(MessageStart) = "message_start",
    Token(Token) = "token",
    ToolCall(ToolCall) = "tool_call",
    Block(BlockEvent) = "block",
    BlockUpdate(BlockEvent) = "block_update",
    Usage(Usage) = "usage",
    StateUpdate(StateUpdate) = "state_update",
    AgentStart(AgentProgress) = "agent_start",
    AgentComplete(AgentProgress) = "agent_complete",
    Handoff(Handoff) = "handoff",
    OperatorMessage(OperatorMessage) = "operator_message",
    VisitorMessage(VisitorMessage) = "visitor_message",
    Typing(Typing) = "typing",
    MessageEnd(MessageEnd) = "message_end",
    Error(ErrorEvent) = "error",
}

impl StreamEvent {
    /// The SSE frame of an event that is not numbered (typing indicators).
    pub fn to_sse_unnumbered(&self) -> String {
        format!("event: {}\ndata: {}\n\n", self.name(), self.data_json())
    }

    /// The whole SSE frame for this event with sequence number `seq`.
    pub fn to_sse(&self, seq: u64) -> String {
        let data = self.data_json();
        let mut frame = String::with_capacity(data.len() + 40);
        frame.push_str("id: ");
        frame.push_str(&seq.to_string());
        frame.push_str("\nevent: ");
        frame.push_str(self.name());
        frame.push_str("\ndata: ");
        // JSON never contains a raw newline, so one data line is enough.
        frame.push_str(&data);
        frame.push_str("\n\n");
        frame
    }
}

/// An event with its per-conversation sequence number.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqEvent {
    pub seq: u64,
    pub event: StreamEvent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_frame_is_one_sse_event() {
        let frame = StreamEvent::Token(Token { text: "he\nllo".into() }).to_sse(7);
        assert_eq!(frame, "id: 7\nevent: token\ndata: {\"text\":\"he\\nllo\"}\n\n");
    }

    #[test]
    fn parses_known_and_ignores_unknown_names() {
        let ev = StreamEvent::parse("message_end", r#"{"message_id":"m1","status":"stopped"}"#).unwrap();
        assert_eq!(
            ev,
            Some(StreamEvent::MessageEnd(MessageEnd { message_id: "m1".into(), status: MessageStatus::Stopped }))
        );
        assert_eq!(StreamEvent::parse("teleport", "{}").unwrap(), None);
        assert!(StreamEvent::parse("token", "{").is_err());
    }

    #[test]
    fn every_event_round_trips() {
        let events = vec![
            StreamEvent::MessageStart(MessageStart {
                conversation_id: "c".into(),
                message_id: "m".into(),
                role: Role::Assistant,
            }),
            StreamEvent::ToolCall(ToolCall {
                call_id: "c".into(),
                name: "escalate_to_human".into(),
                arguments: serde_json::json!({"reason": "x"}),
                status: ToolCallStatus::Failed,
                hop: 1,
                error: Some("boom".into()),
                duration_ms: Some(3),
            }),
            StreamEvent::Error(ErrorEvent { code: StreamCode::Other("UPSTREAM".into()), message: "sorry".into() }),
        ];
        for ev in events {
            let back = StreamEvent::parse(ev.name(), &ev.data_json()).unwrap().unwrap();
            assert_eq!(back, ev);
        }
    }
}
