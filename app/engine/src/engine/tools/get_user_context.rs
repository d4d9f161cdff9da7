//! `get_user_context` (capability `user_memory`): what we know about the visitor — the memories
//! related to the current question (search, 3 at most) merged with the most important ones (5 at
//! most), without duplicates.

use serde_json::{Value, json};

use super::search_knowledge::related_memories;
use super::{Tool, ToolContext, ToolError, ToolOutput, async_trait};
use crate::store::memories;

pub struct GetUserContext;

#[async_trait]
impl Tool for GetUserContext {
    fn name(&self) -> &'static str {
        "get_user_context"
    }

    fn description(&self) -> &'static str {
        "Recall what the visitor told us before (their background, preferences and intentions) to personalise the \
         advice."
    }

    fn capability(&self) -> &'static str {
        "user_memory"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::READ
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 500}},
            "required": ["query"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let query = args["query"].as_str().unwrap_or_default();
        let (relevant, important) =
            tokio::join!(related_memories(ctx, query, 3), memories::of_visitor(&ctx.db, &ctx.visitor_id));
        let important = important.map_err(|e| ToolError::internal("could not read memories", e))?;
        let mut merged = relevant;
        for m in important.into_iter().take(5) {
            if !merged.iter().any(|x| x.id == m.id) {
                merged.push(m);
            }
        }
        let list: Vec<Value> =
            merged.iter().map(|m| json!({"type": m.kind, "content": m.content, "importance": m.importance})).collect();
        Ok(ToolOutput::result(json!({
            "success": true,
            "memories": list,
            "message": format!("找到 {} 条用户背景信息", list.len()),
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tools::testing;

    #[tokio::test]
    async fn relevant_then_important_without_duplicates() {
        let t = testing::context().await;
        let (db, v, a) = (&t.ctx.db, &t.ctx.visitor_id, &t.ctx.agent.id);
        memories::save(db, v, a, "FACT", "用户35岁，硕士学历", None, 80, 1).await.unwrap();
        memories::save(db, v, a, "INTENT", "用户对优才计划感兴趣", Some("QMAS"), 75, 2).await.unwrap();
        memories::save(db, v, a, "PREFERENCE", "用户偏好微信沟通", None, 60, 3).await.unwrap();
        for i in 0..5 {
            memories::save(db, v, a, "FACT", &format!("其他事实 {i}"), None, 10, 4).await.unwrap();
        }
        let out = GetUserContext.execute(&t.ctx, json!({"query": "优才计划"})).await.unwrap();
        let list = out.result["memories"].as_array().unwrap();
        assert_eq!(list[0]["content"], "用户对优才计划感兴趣");
        let contents: Vec<&str> = list.iter().map(|m| m["content"].as_str().unwrap()).collect();
        assert_eq!(contents.iter().filter(|c| **c == "用户对优才计划感兴趣").count(), 1);
        assert!(contents.contains(&"用户35岁，硕士学历"));
        assert!(list.len() <= 8);
        assert_eq!(out.result["message"], format!("找到 {} 条用户背景信息", list.len()));
    }

    #[tokio::test]
    async fn another_visitor_sees_nothing() {
        let t = testing::context().await;
        memories::save(&t.ctx.db, &t.ctx.visitor_id, &t.ctx.agent.id, "FACT", "秘密", None, 80, 1).await.unwrap();
        let other =
            crate::store::visitors::create(&t.ctx.db, &t.ctx.agent.id, "pv_other", None, &Default::default(), 0)
                .await
                .unwrap();
        let mut ctx = t.ctx.clone();
        ctx.visitor_id = other.id;
        let out = GetUserContext.execute(&ctx, json!({"query": "秘密"})).await.unwrap();
        assert_eq!(out.result["memories"], json!([]));
    }
}
