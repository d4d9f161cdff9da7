//! What the console's server functions send to the browser.

mod answer_tests;
mod answers;
mod contacts;
mod conversations;
mod dashboard;
mod engage;
mod hours;
mod http_tools;
mod identity;
mod inbox;
mod notify;
mod reports;
mod search;
mod sources;
mod versions;
mod webhooks;

use serde::{Deserialize, Serialize};

pub use answer_tests::{
    CHECK_KINDS, CaseCompare, CaseForm, CaseOutcome, CheckForm, CheckLine, PreviewReply, TestOutcome, TestRunItem,
    TestRunView, TestsView,
};
pub use answers::{SavedReplyItem, UnansweredGroup};
pub use contacts::{
    BrowserItem, ContactConversationItem, ContactDetail, ContactItem, ContactLeadItem, ContactOrderItem,
    ContactRatingItem,
};
pub use conversations::{
    ConsoleMessage, ConsultingState, ConversationDetail, ConversationItem, ToolCallInfo, UsageInfo,
};
pub use dashboard::{AgentRatings, AgentSpend, AlertItem, Dashboard, DayUsage, TeaserCount, UnpricedPrice};
pub use engage::{EngageView, TriggerItem, TriggerPreview};
pub use hours::{HoursView, NOTIFICATION_CHOICES, NotificationsView, PresenceView};
pub use http_tools::{EmbeddingCounts, HttpToolForm, HttpToolItem};
pub use identity::{AuditItem, DEFAULT_GRACE_HOURS, IdentityView, NewIdentitySecret, SecretItem, UserItem, UserLabel};
pub use inbox::{AssistItem, Colleague, LabelTag, NoteItem, SummaryItem, TeamItem, ViewCounts};
pub use notify::{NOTIFY_KINDS, NotificationItem, NotifyPage, UnreadView};
pub use reports::ReportOptions;
pub use search::{SearchHit, SearchResult};
pub use sources::{
    FileOutcome, PAGE_STATUSES, PageItem, PassageItem, RunItem, SCHEDULE_CHOICES, SourceItem, UPLOAD_MAX_BYTES,
    WebsiteForm,
};
pub use versions::{BehaviourDiff, DiffLine, DraftInfo, FieldChange, VersionItem, VersionOutcome, VersionsView};
pub use webhooks::{AttemptItem, DeliveryItem, EndpointItem, NewEndpoint, WEBHOOK_EVENTS, WebhooksView};

/// The signed-in person.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Me {
    pub id: String,
    pub name: String,
    pub email: String,
    /// `admin` or `operator`.
    pub role: String,
}

impl Me {
    pub fn is_admin(&self) -> bool {
        self.role == "admin"
    }
}

/// A page of a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: i64,
    pub page: i64,
    pub per_page: i64,
}

impl<T> Page<T> {
    /// How many pages the list has (at least one).
    pub fn pages(&self) -> i64 {
        page_count(self.total, self.per_page)
    }
}

/// How many pages `total` rows fill, `per_page` a page (at least one).
pub fn page_count(total: i64, per_page: i64) -> i64 {
    ((total + per_page - 1) / per_page.max(1)).max(1)
}

/// What the agent form needs, in one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentFormData {
    pub form: AgentForm,
    pub tools: Vec<ToolInfo>,
    pub unpriced: UnpricedPrice,
    /// The agent's model (as stored) has a price row.
    pub model_priced: bool,
}

/// A lead in the list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeadItem {
    pub id: String,
    pub name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub message: String,
    pub status: String,
    pub notes: String,
    pub created_at: i64,
    pub conversation_id: String,
}

/// An order in the list (the amount formatted in its currency).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderItem {
    pub id: String,
    pub category: String,
    pub amount: String,
    pub method: String,
    pub status: String,
    pub created_at: i64,
    pub conversation_id: String,
    /// The assessment facts collected before the order, as `key: value` lines.
    #[serde(default)]
    pub facts: Vec<String>,
}

/// An agent in the list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentSummary {
    pub id: String,
    pub key: String,
    pub name: String,
    pub vertical: String,
    pub provider: String,
    pub model: String,
    pub capabilities: Vec<String>,
    /// The model has no row in the price table (it is charged the default price).
    pub unpriced: bool,
}

/// An agent as the edit form shows it. The API key is never sent back: only whether one is set
/// and its last four characters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentForm {
    pub id: Option<String>,
    pub key: String,
    pub name: String,
    pub vertical: String,
    pub capabilities: Vec<String>,
    /// `None`: every tool the capabilities allow.
    pub enabled_tools: Option<Vec<String>>,
    /// `demo` or `openai`.
    pub provider: String,
    pub base_url: String,
    pub api_key_hint: Option<String>,
    /// A new key to store (empty: keep the current one).
    pub new_api_key: String,
    pub model: String,
    pub fallback_model: String,
    pub system_prompt: String,
    pub greeting: String,
    pub theme_color: String,
    pub launcher_position: String,
    /// Text on the theme colour; empty: chosen for contrast.
    pub text_color: String,
    /// `light`, `dark` or `auto`.
    pub color_scheme: String,
    /// `chat`, `help`, `sparkle` or `none`.
    pub launcher_icon: String,
    pub launcher_label: String,
    /// In CSS pixels, as typed.
    pub panel_width: String,
    pub panel_height: String,
    /// `auto`, `en`, `zh-Hans` or `zh-Hant`.
    pub language: String,
    /// Empty: the panel's own.
    pub placeholder: String,
    pub starters: Vec<String>,
    /// The pre-chat form: its title, and `off`, `optional` or `required` for each detail.
    #[serde(default)]
    pub prechat_title: String,
    #[serde(default)]
    pub prechat_name: String,
    #[serde(default)]
    pub prechat_email: String,
    #[serde(default)]
    pub prechat_phone: String,
    pub allowed_origins: Vec<String>,
    pub budget_usd: f64,
    /// Tool hops per turn; empty: the mode's default.
    pub max_turns: String,
    /// Spend per UTC day; empty: no cap.
    pub daily_cap_usd: String,
    /// `max_tokens` of every model call; empty: the server's default.
    #[serde(default)]
    pub max_tokens: String,
    /// The agent's services with their prices, one per line (`CODE | Name | price | currency | words`).
    #[serde(default)]
    pub services: String,
    /// Its official sites, one per line (`Name | https://…`).
    #[serde(default)]
    pub sites: String,
    /// Its reference news, one per line (`CODE | Title | Summary`).
    #[serde(default)]
    pub reference_news: String,
}

/// What is wrong with one field of a form (the wire's type: the store's rules speak it too).
pub use parley_widget::protocol::FieldError;

/// The outcome of saving a form: the id, or what is wrong with which field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    pub id: Option<String>,
    pub errors: Vec<FieldError>,
}

/// A registry tool and the capability it needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub capability: String,
}

/// A knowledge base in the list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeBaseItem {
    pub id: String,
    pub agent_id: String,
    pub agent_name: String,
    pub name: String,
    pub description: String,
    /// Words that make a question on-topic (comma separated).
    pub topics: String,
    pub articles: i64,
}

/// An article as the editor edits it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArticleForm {
    pub id: Option<String>,
    pub knowledge_base_id: String,
    pub title: String,
    pub category: String,
    /// `article` or `experience`.
    pub kind: String,
    pub body: String,
    pub source_url: String,
}

/// An article in the list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArticleItem {
    pub id: String,
    pub title: String,
    pub category: Option<String>,
    pub kind: String,
    pub updated_at: i64,
}

/// An MCP token in the list (its prefix only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenItem {
    pub id: String,
    pub agent_key: String,
    pub name: String,
    pub feature_set: String,
    pub output: String,
    /// The modules it may use, comma-separated; empty: all.
    #[serde(default)]
    pub modules: String,
    pub prefix: String,
    pub created_at: i64,
    pub revoked: bool,
}

/// A new MCP token: shown once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewToken {
    pub id: String,
    pub token: String,
    /// Streamable HTTP (`/mcp`).
    pub url: String,
    /// The older HTTP+SSE transport (`/sse/mcp`), for clients configured with `transportType: "sse"`.
    pub sse_url: String,
}

/// One row of the model price table: US dollars per million tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelPriceItem {
    pub model_prefix: String,
    pub input_per_mtok: f64,
    pub cached_per_mtok: f64,
    pub output_per_mtok: f64,
    pub context_window: u64,
    pub vision: bool,
}

/// A price row as the form edits it: numbers as typed (the server checks them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelPriceForm {
    /// Saving a prefix that has a row replaces that row.
    pub model_prefix: String,
    pub input_per_mtok: String,
    pub cached_per_mtok: String,
    pub output_per_mtok: String,
    pub context_window: String,
    pub vision: bool,
}

impl From<&ModelPriceItem> for ModelPriceForm {
    fn from(p: &ModelPriceItem) -> Self {
        ModelPriceForm {
            model_prefix: p.model_prefix.clone(),
            input_per_mtok: p.input_per_mtok.to_string(),
            cached_per_mtok: p.cached_per_mtok.to_string(),
            output_per_mtok: p.output_per_mtok.to_string(),
            context_window: p.context_window.to_string(),
            vision: p.vision,
        }
    }
}

/// An expert in the list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpertItem {
    pub name: String,
    pub description: String,
    pub enabled: bool,
    /// `None`: the coordinator's model.
    pub model: Option<String>,
    pub tools: Vec<String>,
    pub max_tokens: u32,
    /// The key of the coordinator whose own copy this is; `None`: shared by every coordinator.
    pub agent: Option<String>,
    /// The shared expert a copy stands in for.
    pub based_on: Option<String>,
}

/// An expert as the edit form shows it. The name identifies it and cannot change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpertForm {
    pub name: String,
    pub description: String,
    pub system_prompt: String,
    /// Registry tools the expert may call.
    pub tools: Vec<String>,
    /// Empty: the coordinator's model.
    pub model: String,
    /// As typed (50 to 8000).
    pub max_tokens: String,
    pub enabled: bool,
    /// The JSON Schema of the expert's input, as text.
    pub input_schema: String,
    /// For a copy: the key of its coordinator and the shared expert it stands in for.
    #[serde(default)]
    pub copy_of: Option<(String, String)>,
}

/// Short relative time for lists (`3 min ago`).
pub fn ago(now_ms: i64, then_ms: i64) -> String {
    let s = ((now_ms - then_ms) / 1000).max(0);
    match s {
        0..=59 => "just now".into(),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86_400),
    }
}
