//! Tools made for the tests, and registries that hold them.

use std::sync::Arc;

use futures::future::BoxFuture;
use parley_engine::engine::tools::effect::Effect;
use parley_engine::engine::tools::escalate_to_human::EscalateToHuman;
use parley_engine::engine::tools::registry::Registry;
use parley_engine::engine::tools::{Tool, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

/// A tool of capability `testing` without arguments that does what `run` does.
pub struct TestTool {
    pub name: &'static str,
    pub description: &'static str,
    pub run: fn() -> BoxFuture<'static, Result<ToolOutput, ToolError>>,
}

#[parley_engine::engine::tools::async_trait]
impl Tool for TestTool {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        self.description
    }
    fn capability(&self) -> &'static str {
        "testing"
    }
    fn effect(&self) -> Effect {
        Effect::READ
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    }
    async fn execute(&self, _: &ToolContext, _: Value) -> Result<ToolOutput, ToolError> {
        (self.run)().await
    }
}

/// A registry of `escalate_to_human` plus `extra`.
pub fn registry_with(extra: Vec<TestTool>) -> Registry {
    let mut tools: Vec<Arc<dyn Tool>> = vec![Arc::new(EscalateToHuman)];
    tools.extend(extra.into_iter().map(|t| Arc::new(t) as Arc<dyn Tool>));
    Registry::new(tools).expect("valid registry")
}
