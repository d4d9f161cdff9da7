//! Server-side tools the model can call mid-turn. Each tool is one file implementing [`Tool`]; the
//! [`registry::Registry`] gates them by the agent's capabilities and `enabled_tools`, checks their
//! names (SEP-986) and validates the model's arguments against each tool's JSON schema before
//! `execute` ever runs.

/// Tool implementations use this attribute on their `impl Tool`.
pub use async_trait::async_trait;
/// The "talk to a person" block, also offered when a turn ends at a limit.
pub use escalate_to_human::escalation_block as handoff_block;

pub mod ask_form;
pub mod check_off_topic;
pub mod collect_assessment_info;
pub mod effect;
pub mod escalate_to_human;
pub mod fetch_immigration_news;
pub mod generate_payment;
pub mod get_current_datetime;
pub mod get_exchange_rate;
pub mod get_user_context;
pub mod http_tool;
pub mod names;
pub mod offer_quick_replies;
pub mod owner_blocks;
pub mod registry;
pub mod save_user_memory;
pub mod search_knowledge;
#[cfg(test)]
pub mod testing;
pub mod web_search;

use std::sync::Arc;

use parley_protocol::Block;
use serde_json::Value;

use super::clock::Clock;
use crate::store::Db;
use crate::store::agents::{Agent, Domain};

/// What a tool hands back: a result for the model and, optionally, blocks for the widget.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    pub result: Value,
    pub blocks: Vec<Block>,
}

impl ToolOutput {
    pub fn result(result: Value) -> Self {
        ToolOutput { result, blocks: Vec::new() }
    }
}

/// Why a tool call did not produce a result. Sent back to the model as the tool's answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ToolError {
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    #[error("the tool took too long")]
    Timeout,
    #[error("the tool failed: {0}")]
    Failed(String),
    /// A failure inside Parley (the database, an outside service): its detail is logged, never
    /// shown to the model or the visitor.
    #[error("the tool failed on our side ({0}); try again later")]
    Internal(&'static str),
    /// An outside service's failure: the model and the visitor read `shown` (a generic text);
    /// `detail` (what the service answered, the address that was refused) goes to the log and to
    /// the console's record of the call, never further.
    #[error("the tool failed: {shown}")]
    Withheld { shown: String, detail: String },
}

impl ToolError {
    /// A failure inside Parley: logs `detail` and keeps only `what` (e.g. "could not store the details").
    pub fn internal(what: &'static str, detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "tool: {what}");
        ToolError::Internal(what)
    }

    /// An outside service's failure: the model and the visitor read `shown`; `detail` is logged
    /// and kept for the console.
    pub fn withheld(shown: impl Into<String>, detail: impl Into<String>) -> Self {
        let (shown, detail) = (shown.into(), detail.into());
        tracing::warn!(detail = %detail, "tool: {shown}");
        ToolError::Withheld { shown, detail }
    }

    /// What the console's record of the call says: the detail where one was withheld.
    pub fn for_console(&self) -> String {
        match self {
            ToolError::Withheld { shown, detail } => format!("{shown}: {detail}"),
            other => other.to_string(),
        }
    }
}

/// The most of one tool result the model reads, in bytes.
pub const MAX_RESULT_BYTES: usize = 16 * 1024;

/// A tool's outcome as the model reads it: the result's JSON, or `{"ok": false, "error": …}`. A
/// result longer than [`MAX_RESULT_BYTES`] is cut, and says so, so that one tool (a web page, a
/// large document) cannot fill the model's context or the bill.
pub fn for_model(result: &Result<ToolOutput, ToolError>) -> String {
    let text = match result {
        Ok(output) => output.result.to_string(),
        Err(e) => serde_json::json!({"ok": false, "error": e.to_string()}).to_string(),
    };
    if text.len() <= MAX_RESULT_BYTES {
        return text;
    }
    let mut cut = MAX_RESULT_BYTES - 256;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    serde_json::json!({
        "truncated": true,
        "note": format!("The result was {} KiB; only its first {} KiB are here.", text.len() / 1024, cut / 1024),
        "partial": &text[..cut],
    })
    .to_string()
}

/// Everything a tool may use while it runs.
#[derive(Clone)]
pub struct ToolContext {
    pub db: Db,
    pub agent: Arc<Agent>,
    pub conversation_id: String,
    pub visitor_id: String,
    /// The assistant message being written.
    pub message_id: String,
    pub clock: Arc<dyn Clock>,
    pub http: reqwest::Client,
    /// Knowledge search, payments.
    pub services: Arc<super::Services>,
}

/// A service code as any tool takes it: the agent's own codes are offered by [`category_schema`].
pub fn any_category() -> Value {
    serde_json::json!({"type": "string", "minLength": 1, "maxLength": crate::store::agents::MAX_CODE_CHARS})
}

/// A service code of the agent (and `ALL` when `with_all`), as an enum the model picks from;
/// any short code when the agent lists no services.
pub fn category_schema(domain: &Domain, with_all: bool) -> Value {
    let mut codes = domain.codes();
    if codes.is_empty() {
        return any_category();
    }
    if with_all {
        codes.push("ALL");
    }
    serde_json::json!({"type": "string", "enum": codes})
}

/// `schema` with its property `category` replaced by the agent's codes ([`category_schema`]);
/// `None` when the agent lists no services (nothing to narrow).
pub fn with_domain_category(mut schema: Value, domain: &Domain, with_all: bool) -> Option<Value> {
    if domain.services.is_empty() {
        return None;
    }
    schema["properties"]["category"] = category_schema(domain, with_all);
    Some(schema)
}

/// Refuses a category the agent does not list (when it lists any): the model read the codes in
/// the schema, so another one is a wrong argument, not a new service.
pub fn check_category(agent: &Agent, category: &str) -> Result<(), ToolError> {
    if agent.domain.services.is_empty() || agent.domain.service(category).is_some() {
        return Ok(());
    }
    Err(ToolError::InvalidArguments(format!(
        "unknown category {category}; this agent's are {}",
        agent.domain.codes().join(", ")
    )))
}

/// A server-side helper the model can call.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// Unique name, as the model sees it (must pass SEP-986).
    fn name(&self) -> &str;
    /// When to use it, written for the model.
    fn description(&self) -> &str;
    /// The capability an agent needs for this tool to be offered.
    fn capability(&self) -> &str;
    /// Whether its results come from outside and whether it changes something (see
    /// [`effect`]): every tool says, so that a new one cannot slip past the rule on injected text.
    fn effect(&self) -> effect::Effect;
    /// JSON schema of the arguments (an object schema).
    fn schema(&self) -> Value;
    /// The description and argument schema as offered to an agent whose knowledge covers
    /// `scope`, for a tool whose wording depends on it (the knowledge tools); `None` keeps
    /// [`Tool::description`] and [`Tool::schema`]. Arguments are still validated against
    /// [`Tool::schema`], so a tailored schema may only narrow it.
    fn tailored(&self, _scope: &super::knowledge::Scope) -> Option<(String, Value)> {
        None
    }
    /// The argument schema narrowed to the agent's field of work (its service codes, see
    /// [`category_schema`]), for a tool whose arguments name a service; `None` keeps
    /// [`Tool::schema`]. The tool checks the value again when it runs ([`check_category`]).
    fn for_domain(&self, _domain: &Domain) -> Option<Value> {
        None
    }
    /// Runs the tool with arguments that already passed the schema.
    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError>;
}

#[cfg(test)]
mod result_tests {
    use super::*;

    #[test]
    fn a_huge_result_is_cut_and_says_so() {
        let big = "x".repeat(1024 * 1024);
        let text = for_model(&Ok(ToolOutput::result(serde_json::json!({"page": big}))));
        assert!(text.len() <= MAX_RESULT_BYTES + 512, "{} bytes", text.len());
        let v: Value = serde_json::from_str(&text).expect("still JSON");
        assert_eq!(v["truncated"], true);
        assert!(v["note"].as_str().unwrap().contains("1024 KiB"), "{}", v["note"]);
        let small = for_model(&Ok(ToolOutput::result(serde_json::json!({"ok": true}))));
        assert_eq!(small, r#"{"ok":true}"#);
    }

    #[test]
    fn internal_failures_keep_their_detail_to_the_log() {
        let e = ToolError::internal("could not store the details", "error returned from database: password=hunter2");
        let text = for_model(&Err(e));
        assert!(!text.contains("hunter2") && !text.contains("database"), "{text}");
        assert!(text.contains("could not store the details"));
    }
}
