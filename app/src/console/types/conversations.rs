//! Conversations as the console shows them: the list's rows and a transcript with its tool
//! calls, usage, ratings and the coordinator's state.

use parley_widget::protocol::Block;
use serde::{Deserialize, Serialize};

use super::UserLabel;

/// A conversation in the list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConversationItem {
    pub id: String,
    pub agent_name: String,
    pub visitor: String,
    pub status: String,
    pub claimed_by: Option<String>,
    pub last_message: String,
    pub messages: i64,
    pub lead_submitted: bool,
    pub updated_at: i64,
    /// The host site's user, when it identified the visitor.
    #[serde(default)]
    pub user: Option<UserLabel>,
    /// The whole visitor id (exports and deletions name it).
    #[serde(default)]
    pub visitor_id: String,
    /// Whose it is (issue 43): the assignee's id and name, the team's id and name, its labels.
    #[serde(default)]
    pub assignee_id: Option<String>,
    #[serde(default)]
    pub assignee: Option<String>,
    #[serde(default)]
    pub team_id: Option<String>,
    #[serde(default)]
    pub team: Option<String>,
    #[serde(default)]
    pub labels: Vec<super::LabelTag>,
    /// The name operators gave the contact (issue 43, part 5).
    #[serde(default)]
    pub contact_name: Option<String>,
}

/// A tool call of an answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallInfo {
    pub name: String,
    pub arguments: String,
    pub result: Option<String>,
    pub status: String,
    pub error: Option<String>,
    pub duration_ms: u64,
    /// For a call an expert made: the coordinator's tool that ran the expert (`invoke_…`); the
    /// call is listed right after it.
    #[serde(default)]
    pub under: Option<String>,
}

/// One upstream call of an answer: model, outcome, tokens, cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsageInfo {
    pub model: String,
    pub outcome: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

/// A message of the transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsoleMessage {
    pub id: String,
    /// `visitor`, `assistant`, `operator` or `system`.
    pub role: String,
    pub text: String,
    pub author: Option<String>,
    pub status: String,
    pub created_at: i64,
    pub blocks: Vec<Block>,
    pub tools: Vec<ToolCallInfo>,
    pub usage: Vec<UsageInfo>,
    /// Ids of the images sent with the message (read at `/admin/attachments/{id}`).
    #[serde(default)]
    pub images: Vec<String>,
    /// The visitor's rating of this answer (1 or -1) and their comment.
    #[serde(default)]
    pub rating: Option<(i64, Option<String>)>,
    /// The agent's version that wrote an assistant message.
    #[serde(default)]
    pub agent_version: Option<i64>,
}

/// A conversation with everything that happened in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConversationDetail {
    pub item: ConversationItem,
    /// The agent's capabilities: which blocks the console may render.
    pub capabilities: Vec<String>,
    /// The signed-in person holds the conversation.
    pub mine: bool,
    pub messages: Vec<ConsoleMessage>,
    pub cost_usd: f64,
    /// The coordinator's last consulting state; `None` when it never reported one.
    pub consulting: Option<ConsultingState>,
    /// The visitor's rating of the closed conversation (1 to 5) and their comment.
    #[serde(default)]
    pub rating: Option<(i64, Option<String>)>,
    /// The agent's knowledge bases, `(id, name)`: where a reply can be saved as an article.
    #[serde(default)]
    pub knowledge_bases: Vec<(String, String)>,
    /// The operators' private notes, oldest first (never shown to the visitor).
    #[serde(default)]
    pub notes: Vec<super::NoteItem>,
    /// The copilot's summary for the person it was handed to.
    #[serde(default)]
    pub summary: Option<super::SummaryItem>,
}

/// A coordinator's last state report, as the console shows it (values are plain text).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsultingState {
    /// One of the known stages (`opening` … `conversion`); `None` when it named none or another.
    pub stage: Option<String>,
    /// The facts collected so far, `(name, value)`, by name.
    pub facts: Vec<(String, String)>,
    /// A report that was not JSON, kept as text.
    pub note: Option<String>,
}
