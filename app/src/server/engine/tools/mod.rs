//! Server-side tools the model can call mid-turn. Each tool is one file implementing [`Tool`]; the
//! [`registry::Registry`] gates them by the agent's capabilities and `enabled_tools`, checks their
//! names (SEP-986) and validates the model's arguments against each tool's JSON schema before
//! `execute` ever runs.

/// Tool implementations use this attribute on their `impl Tool`.
pub use async_trait::async_trait;
/// The "talk to a person" block, also offered when a turn ends at a limit.
pub use escalate_to_human::escalation_block as handoff_block;

pub mod check_off_topic;
pub mod collect_assessment_info;
pub mod escalate_to_human;
pub mod fetch_immigration_news;
pub mod generate_payment;
pub mod get_current_datetime;
pub mod get_exchange_rate;
pub mod get_user_context;
pub mod names;
pub mod registry;
pub mod save_user_memory;
pub mod search_knowledge;
#[cfg(test)]
pub mod testing;
pub mod web_search;

use std::sync::Arc;

use parley_widget::protocol::Block;
use serde_json::Value;

use super::clock::Clock;
use crate::server::store::Db;
use crate::server::store::agents::Agent;

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

/// A server-side helper the model can call.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// Unique name, as the model sees it (must pass SEP-986).
    fn name(&self) -> &'static str;
    /// When to use it, written for the model.
    fn description(&self) -> &'static str;
    /// The capability an agent needs for this tool to be offered.
    fn capability(&self) -> &'static str;
    /// JSON schema of the arguments (an object schema).
    fn schema(&self) -> Value;
    /// Runs the tool with arguments that already passed the schema.
    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError>;
}
