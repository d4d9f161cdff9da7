//! JSON bodies of the widget API (`/api/v1/...`).

use serde::{Deserialize, Serialize};

use super::block::Block;
use super::codes::ApiCode;
use super::event::{MessageStatus, Role, ToolCallStatus};
use super::look::{LanguageSetting, Theme};

/// Largest visitor message the server accepts, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// What the browser may know about an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublicAgentConfig {
    pub key: String,
    pub name: String,
    pub greeting: String,
    pub theme: Theme,
    /// Capabilities the server authorises this agent to render.
    pub capabilities: Vec<String>,
    /// True when the agent answers with the built-in offline demo model.
    pub demo_model: bool,
    pub max_message_chars: usize,
    /// The agent's model reads images: the panel offers to attach some.
    #[serde(default)]
    pub accepts_images: bool,
    /// The language of the panel's words.
    #[serde(default)]
    pub language: LanguageSetting,
    /// The input's placeholder; empty: the panel's own ("Type a message…").
    #[serde(default)]
    pub placeholder: String,
    /// Questions offered as chips before the first message (at most [`MAX_STARTERS`](super::MAX_STARTERS)).
    #[serde(default)]
    pub starters: Vec<String>,
    /// Whether people are in now, for an agent with business hours (`None`: it has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<Availability>,
    /// The server sends mail: a visitor whose address is known may have the transcript mailed.
    #[serde(default)]
    pub mail_transcripts: bool,
    /// The agent's pre-chat form, filled in before the first message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prechat: Option<crate::Form>,
}

/// Outside business hours: nobody is in until `reopens_at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    pub open: bool,
    /// When people are back (Unix ms), when closed and known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reopens_at: Option<i64>,
}

/// Largest image a visitor may attach, in bytes.
pub const MAX_ATTACHMENT_BYTES: usize = 5 * 1024 * 1024;
/// Images one message may carry.
pub const MAX_ATTACHMENTS_PER_MESSAGE: usize = 4;
/// Image types a visitor may attach.
pub const ATTACHMENT_TYPES: [&str; 3] = ["image/png", "image/jpeg", "image/webp"];

/// Answer to `POST /api/v1/attachments` (the image's bytes as the body).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttachmentCreated {
    pub id: String,
    pub mime: String,
    pub size: u64,
}

/// An image sent with a message; its bytes are at `GET /api/v1/attachments/{id}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachmentRef {
    pub id: String,
    pub mime: String,
}

/// `POST /api/v1/visitors`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateVisitor {
    pub agent: String,
    /// Origin of the page that embeds the widget.
    #[serde(default)]
    pub host_origin: Option<String>,
}

/// `POST /api/v1/visitors/return`: the token of a return mail's link (`#parley-return=…` on the
/// site page), exchanged for a visitor token of the conversation's visitor.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FollowReturn {
    pub agent: String,
    pub token: String,
}

/// Answer to `POST /api/v1/visitors/return`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Returned {
    pub visitor_id: String,
    pub token: String,
    pub conversation_id: String,
}

/// Answer to `POST /api/v1/visitors`: a bearer token the panel keeps in its own storage.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VisitorCreated {
    pub visitor_id: String,
    pub token: String,
}

/// `POST /api/v1/chat`: send a visitor message; answered with an SSE stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendMessage {
    pub agent: String,
    #[serde(default)]
    pub conversation_id: Option<String>,
    pub message: String,
    /// Chosen by the client; sending the same id again resumes that turn instead of starting a new
    /// one (safe retries).
    #[serde(default)]
    pub client_message_id: Option<String>,
    /// Ids of images uploaded with `POST /api/v1/attachments` to send with the message (at most
    /// [`MAX_ATTACHMENTS_PER_MESSAGE`]). With images the text may be empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<String>,
    /// What the host page says about itself (`Parley.setContext`: the page, the cart…), at most
    /// [`MAX_PAGE_CONTEXT_BYTES`] as JSON; the model reads it as quoted data for this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<serde_json::Value>,
    /// The site page the visitor writes from (`http(s)`, at most 2,048 bytes; the loader tells
    /// the panel): a reply mailed to a visitor who left links back to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_url: Option<String>,
    /// The message submits a form shown under an answer of this conversation (`message` is then
    /// ignored: the server writes the message from the answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<crate::FormSubmission>,
}

/// Largest page context (`Parley.setContext`), in bytes of JSON.
pub const MAX_PAGE_CONTEXT_BYTES: usize = 2048;

/// `POST /api/v1/visitors/identify`: the host site's signed token for its user (a JWT, HS256,
/// signed with one of the agent's identity secrets).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identify {
    pub agent: String,
    pub token: String,
}

/// The host site's user, as the panel knows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdentifiedUser {
    /// The host site's user id (the token's `sub`).
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
}

/// Answer to `POST /api/v1/visitors/identify`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Identified {
    pub user: IdentifiedUser,
    /// A new visitor token to use from now on (the browser was another user's); `None`: keep
    /// the current one.
    #[serde(default)]
    pub token: Option<String>,
    /// The user's newest open conversation (from any of their browsers), to show.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

/// Where a conversation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConversationStatus {
    /// The AI answers.
    Bot,
    /// The visitor asked for a person; the AI still answers until someone claims it.
    WaitingHuman,
    /// An operator has claimed the conversation; the AI is silent.
    Human,
    Closed,
}

impl ConversationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationStatus::Bot => "bot",
            ConversationStatus::WaitingHuman => "waiting_human",
            ConversationStatus::Human => "human",
            ConversationStatus::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "bot" => ConversationStatus::Bot,
            "waiting_human" => ConversationStatus::WaitingHuman,
            "human" => ConversationStatus::Human,
            "closed" => ConversationStatus::Closed,
            _ => return None,
        })
    }
}

/// A tool call as shown in a transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSummary {
    pub call_id: String,
    pub name: String,
    pub status: ToolCallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// One message of a transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranscriptMessage {
    pub id: String,
    pub role: Role,
    pub text: String,
    pub blocks: Vec<Block>,
    pub tool_calls: Vec<ToolCallSummary>,
    pub status: MessageStatus,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Sequence number of the event that started this message (0 for visitor messages).
    pub start_seq: u64,
    /// Images sent with a visitor message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentRef>,
    /// The visitor's rating of this answer: 1 (helpful) or -1 (not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<i8>,
}

/// `GET /api/v1/conversations/{id}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    pub conversation_id: String,
    /// The conversation's last event sequence number: follow its stream from here.
    pub last_seq: u64,
    pub status: ConversationStatus,
    pub lead_submitted: bool,
    pub messages: Vec<TranscriptMessage>,
    /// The visitor's rating of the closed conversation, 1 to 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<u8>,
}

/// `POST /api/v1/conversations/{id}/rating`: the visitor rates an answer (`message_id`, `score`
/// 1 or -1) or, once a person has closed it, the whole conversation (no `message_id`, `score` 1
/// to 5); with an optional comment. Rating again replaces the earlier rating.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    pub score: i8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The longest rating comment, in characters.
pub const MAX_RATING_COMMENT_CHARS: usize = 1000;

/// The JSON body of every 4xx/5xx answer of the API.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiError {
    /// Stable machine-readable code, e.g. `message_too_long`.
    pub error: ApiCode,
    /// For people.
    pub message: String,
    /// Field-level problems, when the input was a form.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldError>,
}

/// What is wrong with one field of an input, in words for the person who typed it: the one type
/// for it, from the store's rules through the console's forms to the API's answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The input's field (`key`, `base_url`, …).
    pub field: String,
    /// What to change.
    pub message: String,
}

impl FieldError {
    /// `message` about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), message: message.into() }
    }
}

/// How long a replaced identity secret is still accepted unless the administrator says
/// otherwise, in hours (the console's default and the engine's).
pub const IDENTITY_GRACE_HOURS: i64 = 24;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_message_rejects_unknown_fields() {
        let err = serde_json::from_str::<SendMessage>(r#"{"agent":"a","message":"m","x":1}"#);
        assert!(err.is_err());
    }

    #[test]
    fn attachments_are_optional_on_the_wire() {
        let m: SendMessage = serde_json::from_str(r#"{"agent":"a","message":"m"}"#).unwrap();
        assert!(m.attachments.is_empty());
        assert!(!serde_json::to_string(&m).unwrap().contains("attachments"));
        let m: SendMessage = serde_json::from_str(r#"{"agent":"a","message":"","attachments":["i1"]}"#).unwrap();
        assert_eq!(m.attachments, ["i1"]);
        // A config from a server that does not know images yet.
        let c: PublicAgentConfig = serde_json::from_str(
            r##"{"key":"k","name":"n","greeting":"g","theme":{"color":"#000000","position":"right"},
                "capabilities":[],"demo_model":false,"max_message_chars":4000}"##,
        )
        .unwrap();
        assert!(!c.accepts_images);
        // ... and one from before the look settings: every new field has its default.
        assert_eq!(c.theme, Theme { color: "#000000".into(), ..Theme::default() });
        assert_eq!((c.language, c.placeholder.as_str(), c.starters.len()), (LanguageSetting::Auto, "", 0));
    }
}
