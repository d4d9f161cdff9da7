//! `save_user_memory` (capability `user_memory`): remembers something the visitor said, across
//! conversations (FACT 70, INTENT 80, PREFERENCE 60).

use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, async_trait};
use crate::store::agents::Domain;
use crate::store::memories::{self, KINDS};

pub struct SaveUserMemory;

#[async_trait]
impl Tool for SaveUserMemory {
    fn name(&self) -> &'static str {
        "save_user_memory"
    }

    fn description(&self) -> &'static str {
        "Remember something important the visitor said (a fact about them, a preference or an intention) so later \
         conversations can use it."
    }

    fn capability(&self) -> &'static str {
        "user_memory"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::write(super::effect::Action::Memory)
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "memoryType": {"type": "string", "enum": ["FACT", "PREFERENCE", "INTENT"]},
                "content": {"type": "string", "minLength": 1, "maxLength": 1000},
                "category": super::any_category()
            },
            "required": ["memoryType", "content"],
            "additionalProperties": false
        })
    }

    fn for_domain(&self, domain: &Domain) -> Option<Value> {
        super::with_domain_category(self.schema(), domain, false)
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        if let Some(category) = args.get("category").and_then(Value::as_str) {
            super::check_category(&ctx.agent, category)?;
        }
        let kind = args["memoryType"].as_str().unwrap_or("FACT");
        let importance = KINDS.iter().find(|(k, _)| *k == kind).map(|(_, i)| *i).unwrap_or(70);
        // One line of plain text: a memory is quoted data in later prompts, never a block of its own.
        let content = args["content"].as_str().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ");
        let content = content.as_str();
        let category = args.get("category").and_then(Value::as_str);
        let memory = memories::save(
            &ctx.db,
            &ctx.visitor_id,
            &ctx.agent.id,
            kind,
            content,
            category,
            importance,
            ctx.clock.now_ms(),
        )
        .await
        .map_err(|e| ToolError::internal("could not remember that", e))?;
        Ok(ToolOutput::result(json!({
            "success": true,
            "memoryId": memory.id,
            "message": crate::lang::Lang::of_agent(ctx.agent.language, &ctx.agent.greeting)
                .pick("Noted: I will remember this next time.", "已记住您的信息，下次对话时我会记得"),
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tools::testing;

    #[tokio::test]
    async fn importance_follows_the_kind() {
        let t = testing::context().await;
        for (kind, expected) in [("FACT", 70), ("INTENT", 80), ("PREFERENCE", 60)] {
            let out = SaveUserMemory
                .execute(&t.ctx, json!({"memoryType": kind, "content": format!("{kind} note")}))
                .await
                .unwrap();
            assert_eq!(out.result["success"], true);
            assert!(out.result["memoryId"].as_str().unwrap().starts_with("mem_"));
            let all = memories::of_visitor(&t.ctx.db, &t.ctx.visitor_id).await.unwrap();
            let m = all.iter().find(|m| m.kind == kind).unwrap();
            assert_eq!(m.importance, expected);
        }
    }

    #[tokio::test]
    async fn storage_failure_is_a_tool_error() {
        let t = testing::context().await;
        t.ctx.db.close().await;
        assert!(SaveUserMemory.execute(&t.ctx, json!({"memoryType": "FACT", "content": "x"})).await.is_err());
    }
}
