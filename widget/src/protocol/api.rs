//! JSON bodies of the widget API (`/api/v1/...`).

use serde::{Deserialize, Serialize};

use super::block::Block;
use super::codes::ApiCode;
use super::event::{MessageStatus, Role, ToolCallStatus};

/// Largest visitor message the server accepts, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// Launcher and panel look.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Theme {
    /// CSS colour of the launcher and accents, `#rrggbb`.
    pub color: String,
    /// `right` or `left` (bottom corner of the host page).
    pub position: String,
}

impl Default for Theme {
    fn default() -> Self {
        Theme { color: "#4f46e5".into(), position: "right".into() }
    }
}

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
}

/// `POST /api/v1/conversations/{id}/lead`: the visitor asks a person to get in touch.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeadForm {
    pub name: String,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub phone: Option<String>,
    pub message: String,
}

/// Field-level problems with a lead form, empty when it is valid.
pub fn validate_lead(form: &LeadForm) -> Vec<(&'static str, &'static str)> {
    let mut problems = Vec::new();
    let name = form.name.trim();
    if name.is_empty() {
        problems.push(("name", "Please enter your name."));
    } else if name.chars().count() > 100 {
        problems.push(("name", "The name is too long (100 characters at most)."));
    }
    let email = form.email.as_deref().map(str::trim).filter(|e| !e.is_empty());
    let phone = form.phone.as_deref().map(str::trim).filter(|p| !p.is_empty());
    if email.is_none() && phone.is_none() {
        problems.push(("email", "Please give an email address or a phone number."));
    }
    if let Some(email) = email
        && !looks_like_email(email)
    {
        problems.push(("email", "That email address does not look right."));
    }
    if let Some(phone) = phone
        && !looks_like_phone(phone)
    {
        problems.push(("phone", "That phone number does not look right."));
    }
    if form.message.chars().count() > 2000 {
        problems.push(("message", "The message is too long (2000 characters at most)."));
    }
    problems
}

fn looks_like_email(s: &str) -> bool {
    if s.len() > 254 || s.chars().any(char::is_whitespace) {
        return false;
    }
    match s.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        }
        None => false,
    }
}

fn looks_like_phone(s: &str) -> bool {
    let digits = s.chars().filter(char::is_ascii_digit).count();
    (6..=20).contains(&digits)
        && s.chars().all(|c| c.is_ascii_digit() || matches!(c, '+' | ' ' | '-' | '(' | ')' | '.'))
}

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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(name: &str, email: Option<&str>, phone: Option<&str>) -> LeadForm {
        LeadForm { name: name.into(), email: email.map(Into::into), phone: phone.map(Into::into), message: "hi".into() }
    }

    #[test]
    fn lead_needs_name_and_a_way_to_reach() {
        assert!(validate_lead(&form("Ann", Some("ann@example.com"), None)).is_empty());
        assert!(validate_lead(&form("Ann", None, Some("+852 1234 5678"))).is_empty());
        let fields: Vec<_> = validate_lead(&form(" ", None, None)).into_iter().map(|p| p.0).collect();
        assert_eq!(fields, vec!["name", "email"]);
        assert_eq!(validate_lead(&form("Ann", Some("ann@"), None))[0].0, "email");
        assert_eq!(validate_lead(&form("Ann", None, Some("call me"))).len(), 1);
    }

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
    }
}
