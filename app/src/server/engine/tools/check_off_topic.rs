//! `check_off_topic` (capability `knowledge_search`): is a question about Hong Kong immigration?
//! Decided by the question's words — domain terms, and how well it matches the agent's knowledge
//! (BM25). When it cannot tell, it says "not off-topic", as the seed asks.

use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, async_trait};
use crate::server::engine::knowledge::{self, SearchQuery};

pub struct CheckOffTopic;

/// Words that mark a question as belonging to the domain.
const DOMAIN_TERMS: &[&str] = &[
    "移民",
    "签证",
    "簽證",
    "香港",
    "入境",
    "居留",
    "永居",
    "永久居民",
    "身份",
    "优才",
    "優才",
    "专才",
    "專才",
    "高才",
    "投资移民",
    "科技人才",
    "留学",
    "毕业生",
    "工作签",
    "续签",
    "受养人",
    "家属",
    "qmas",
    "gep",
    "iang",
    "ttps",
    "cies",
    "techtas",
    "visa",
    "immigration",
    "hong kong",
    "residency",
    "permanent resident",
    "work permit",
    "talent",
];

/// BM25 score above which the knowledge clearly covers the question.
const COVERED: f32 = 4.0;

/// The decision, without the knowledge lookup (pure).
pub fn decide(question: &str, best_bm25: Option<f32>) -> (bool, f64) {
    let lower = question.to_lowercase();
    if DOMAIN_TERMS.iter().any(|t| lower.contains(t)) {
        return (false, 0.9);
    }
    let terms = knowledge::tokenizer::terms(question).len();
    match best_bm25 {
        Some(score) if score >= COVERED => (false, 0.75),
        // A substantial question that the knowledge does not touch at all.
        None if terms >= 4 => (true, 0.8),
        Some(score) if terms >= 6 && score < COVERED / 4.0 => (true, 0.6),
        // Too little to go on: let it through.
        _ => (false, 0.3),
    }
}

const SUGGESTION: &str = "这个问题似乎与香港移民无关。我是香港移民咨询顾问，可以为您介绍优才、专才、高才通、留学IANG、投资移民和科技人才等计划。请问您在香港移民方面有什么想了解的吗？";

#[async_trait]
impl Tool for CheckOffTopic {
    fn name(&self) -> &'static str {
        "check_off_topic"
    }

    fn description(&self) -> &'static str {
        "Check whether a question is outside Hong Kong immigration. Use it when a question seems unrelated; if it \
         is off-topic, decline politely using the suggestion."
    }

    fn capability(&self) -> &'static str {
        "knowledge_search"
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 1000}},
            "required": ["question"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let question = args["question"].as_str().unwrap_or_default();
        let best = ctx
            .services
            .knowledge
            .search(&SearchQuery {
                agent_id: &ctx.agent.id,
                knowledge_base_ids: None,
                text: question,
                category: None,
                kind: None,
                limit: 1,
            })
            .await
            .ok()
            .and_then(|hits| hits.first().map(|h| h.bm25));
        let (off_topic, confidence) = decide(question, best);
        Ok(ToolOutput::result(json!({
            "isOffTopic": off_topic,
            "confidence": confidence,
            "suggestion": if off_topic { SUGGESTION } else { "" },
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::engine::tools::testing;

    #[test]
    fn decisions() {
        assert_eq!(decide("优才计划要多少分？", None), (false, 0.9));
        assert_eq!(decide("How do I get a Hong Kong work visa?", None), (false, 0.9));
        assert!(decide("怎么做红烧肉比较好吃", None).0);
        assert!(!decide("申请条件", Some(9.0)).0);
        // Too short to tell: not off-topic.
        assert_eq!(decide("嗯", None), (false, 0.3));
    }

    #[tokio::test]
    async fn uses_the_knowledge() {
        let t = testing::context().await;
        t.knowledge(&[("CIES", "CIES", "article", "新资本投资者入境计划要求申请人投资三千万港元于获许投资资产。")])
            .await;
        let out = CheckOffTopic.execute(&t.ctx, json!({"question": "获许投资资产包括哪些"})).await.unwrap();
        assert_eq!(out.result["isOffTopic"], false);
        let out = CheckOffTopic.execute(&t.ctx, json!({"question": "推荐一部好看的科幻电影吧"})).await.unwrap();
        assert_eq!(out.result["isOffTopic"], true);
        assert!(out.result["suggestion"].as_str().unwrap().contains("香港移民"));
        assert!(out.result["confidence"].as_f64().unwrap() > 0.5);
    }

    #[tokio::test]
    async fn cannot_decide_without_knowledge_means_not_off_topic() {
        let t = testing::context().await;
        t.ctx.db.close().await;
        let out = CheckOffTopic.execute(&t.ctx, json!({"question": "这个呢"})).await.unwrap();
        assert_eq!(out.result["isOffTopic"], false);
    }
}
