//! `check_off_topic` (capability `knowledge_search`): is a question outside what the agent's
//! knowledge covers? Decided by the question's words — the topics of the agent's knowledge bases
//! and their categories, and how well it matches the knowledge (BM25). When it cannot tell, it
//! says "not off-topic", as the seed asks. Nothing in it is particular to one field: the
//! immigration agent's domain words are its knowledge base's topics.

use serde_json::{Value, json};

use super::search_knowledge::bases_sentence;
use super::{Tool, ToolContext, ToolError, ToolOutput, async_trait};
use crate::engine::knowledge::{self, Scope, SearchQuery};

pub struct CheckOffTopic;

/// The share of the question's terms that the best-matching passage contains (0..1). A few
/// terms always match somewhere by chance; a question the knowledge covers shares most of them.
pub fn coverage(question: &str, passages: &[String]) -> f64 {
    passages.iter().map(|p| knowledge::coverage(question, p)).fold(0.0, f64::max)
}

/// What the decision rested on: a topic word in the question, the question's coverage by the
/// best-matching passages (the score itself, 0..1), or too little to go on.
#[derive(Clone, Debug, PartialEq)]
pub enum Basis {
    /// The question names one of the agent's topics (this one).
    Topic(String),
    /// The share of the question's terms the best passage contains.
    Coverage(f64),
    /// Fewer than four terms: a few always match somewhere by chance.
    TooShort,
    /// The knowledge could not be asked.
    NoKnowledge,
}

/// Coverage at or above this: on topic. Below [`OFF_BELOW`]: off topic. Between: let through.
pub const ON_FROM: f64 = 0.5;
pub const OFF_BELOW: f64 = 0.3;

/// The decision from the question, the words that make a question on-topic (lower case) and its
/// best coverage by the knowledge (pure). When it cannot tell, it is not off-topic.
pub fn decide(question: &str, topics: &[String], coverage: Option<f64>) -> (bool, Basis) {
    let lower = question.to_lowercase();
    if let Some(topic) = topics.iter().find(|t| !t.is_empty() && lower.contains(t.as_str())) {
        return (false, Basis::Topic(topic.clone()));
    }
    if knowledge::tokenizer::terms(question).len() < 4 {
        return (false, Basis::TooShort);
    }
    match coverage {
        None => (false, Basis::NoKnowledge),
        Some(c) => (c < OFF_BELOW, Basis::Coverage(c)),
    }
}

/// The tool's account of its decision: what it rested on and, for coverage, the score and the
/// thresholds it was compared with (the model and the console's unanswered list read it).
fn basis_json(basis: &Basis) -> Value {
    match basis {
        Basis::Topic(topic) => json!({"decidedBy": "topic", "topic": topic}),
        Basis::Coverage(c) => json!({
            "decidedBy": "coverage",
            "coverage": (c * 100.0).round() / 100.0,
            "offTopicBelow": OFF_BELOW,
        }),
        Basis::TooShort => json!({"decidedBy": "too_short"}),
        Basis::NoKnowledge => json!({"decidedBy": "no_knowledge"}),
    }
}

/// What the model may say when declining, in the question's script (Chinese or not), naming what
/// the agent's knowledge covers.
pub fn suggestion(question: &str, scope: &Scope) -> String {
    let chinese = question.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let examples: Vec<&str> = scope.categories.iter().take(6).map(String::as_str).collect();
    match (chinese, scope.bases.is_empty()) {
        (true, true) => "这个问题似乎不在我能帮忙的范围内。请问有什么其他我可以帮您的吗？".to_owned(),
        (true, false) => {
            let mut s = format!("这个问题似乎与「{}」无关。我可以为您解答这方面的问题", scope.names("、"));
            if !examples.is_empty() {
                s.push_str(&format!("，例如{}", examples.join("、")));
            }
            s.push_str("。请问您在这方面有什么想了解的吗？");
            s
        }
        (false, true) => {
            "This question seems to be outside what I can help with. Is there something else I can do for you?"
                .to_owned()
        }
        (false, false) => {
            let mut s = format!("This question seems to be outside what I can help with here ({}).", scope.names(", "));
            if !examples.is_empty() {
                s.push_str(&format!(" I can answer questions about {}.", examples.join(", ")));
            }
            s.push_str(" What would you like to know about it?");
            s
        }
    }
}

const DESCRIPTION: &str = "Check whether a question is outside what the agent's knowledge covers. Use it when a \
     question seems unrelated; if it is off-topic, decline politely using the suggestion.";

#[async_trait]
impl Tool for CheckOffTopic {
    fn name(&self) -> &'static str {
        "check_off_topic"
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn capability(&self) -> &'static str {
        "knowledge_search"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::READ
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 1000}},
            "required": ["question"],
            "additionalProperties": false
        })
    }

    fn tailored(&self, scope: &Scope) -> Option<(String, Value)> {
        (!scope.bases.is_empty()).then(|| {
            let description = format!(
                "Check whether a question is outside what this agent covers ({}). Use it when a question seems \
                 unrelated; if it is off-topic, decline politely using the suggestion.",
                bases_sentence(scope)
            );
            (description, self.schema())
        })
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let question = args["question"].as_str().unwrap_or_default();
        let scope = match ctx.services.knowledge.scope(&ctx.agent.id).await {
            Ok(scope) => scope,
            Err(e) => {
                tracing::warn!(error = %e, "off-topic check without the knowledge's scope");
                Default::default()
            }
        };
        let query = SearchQuery {
            agent_id: &ctx.agent.id,
            knowledge_base_ids: None,
            text: question,
            category: None,
            kind: None,
            limit: 3,
        };
        let covered = match ctx.services.knowledge.search(&query).await {
            Ok(hits) => {
                Some(coverage(question, &hits.iter().map(|h| format!("{} {}", h.title, h.text)).collect::<Vec<_>>()))
            }
            Err(e) => {
                tracing::warn!(error = %e, "off-topic check without the knowledge");
                None
            }
        };
        let (off_topic, basis) = decide(question, &scope.topics, covered);
        let mut result = json!({
            "isOffTopic": off_topic,
            "suggestion": if off_topic { suggestion(question, &scope) } else { String::new() },
        });
        if let (Value::Object(out), Value::Object(why)) = (&mut result, basis_json(&basis)) {
            out.extend(why);
        }
        Ok(ToolOutput::result(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tools::testing;

    fn demo_topics() -> Vec<String> {
        let base = &crate::seed::DEMO_BASE;
        crate::store::knowledge::topic_list(base.topics).iter().map(|t| t.to_lowercase()).collect()
    }

    #[test]
    fn decisions() {
        let topics = demo_topics();
        let topic = |q: &str, t: &[String]| decide(q, t, None);
        assert!(matches!(topic("优才计划要多少分？", &topics), (false, Basis::Topic(_))));
        assert!(matches!(topic("How do I get a Hong Kong work visa?", &topics), (false, Basis::Topic(_))));
        assert_eq!(decide("怎么做红烧肉比较好吃", &topics, Some(0.0)), (true, Basis::Coverage(0.0)));
        assert_eq!(decide("推荐一部好看的电影吧", &topics, Some(0.22)), (true, Basis::Coverage(0.22)));
        assert_eq!(decide("获许投资资产包括哪些", &topics, Some(0.6)), (false, Basis::Coverage(0.6)));
        // Between the thresholds: let through, and say on what score.
        assert_eq!(decide("获许投资资产包括哪些", &topics, Some(0.4)), (false, Basis::Coverage(0.4)));
        // Too short to tell, or no knowledge to ask: not off-topic.
        assert_eq!(decide("嗯", &topics, Some(0.0)), (false, Basis::TooShort));
        assert_eq!(decide("怎么做红烧肉比较好吃", &topics, None), (false, Basis::NoKnowledge));
        // The words are the agent's: immigration words mean nothing to another agent.
        assert!(decide("How do I get a Hong Kong work visa?", &["refund".into()], Some(0.0)).0);
        assert_eq!(
            decide("Can I get a refund for my order?", &["refund".into()], Some(0.0)),
            (false, Basis::Topic("refund".into()))
        );
    }

    #[test]
    fn coverage_counts_shared_terms() {
        assert_eq!(coverage("投资资产", &["投资移民的资产要求".into()]), 2.0 / 3.0);
        assert_eq!(coverage("电影", &["投资资产".into()]), 0.0);
    }

    #[tokio::test]
    async fn chance_matches_in_the_demo_knowledge_do_not_make_a_question_on_topic() {
        let t = testing::context().await;
        let base = crate::seed::DEMO_BASE;
        let articles: Vec<(String, String, String, String)> = crate::demo_data::ARTICLES
            .iter()
            .map(|(_, text)| {
                let a = crate::store::knowledge::parse_markdown(text).unwrap();
                (a.title, a.category.unwrap_or_default(), a.kind, a.body)
            })
            .collect();
        let refs: Vec<(&str, &str, &str, &str)> =
            articles.iter().map(|(a, b, c, d)| (a.as_str(), b.as_str(), c.as_str(), d.as_str())).collect();
        t.knowledge_in(&base, &refs).await;
        for (question, off) in [
            ("推荐一部好看的电影吧", true),
            ("香港优才计划怎么申请", false),
            ("今天晚饭做什么菜比较好", true),
            ("获许投资资产包括哪些", false),
            ("申请需要准备哪些文件", false),
        ] {
            let out = CheckOffTopic.execute(&t.ctx, json!({"question": question})).await.unwrap();
            assert_eq!(out.result["isOffTopic"], off, "{question}: {}", out.result);
        }
    }

    #[tokio::test]
    async fn uses_the_knowledge() {
        let t = testing::context().await;
        let base = crate::store::knowledge::BaseFields { name: "香港移民知识库", ..Default::default() };
        t.knowledge_in(
            &base,
            &[("CIES", "CIES", "article", "新资本投资者入境计划要求申请人投资三千万港元于获许投资资产。")],
        )
        .await;
        let out = CheckOffTopic.execute(&t.ctx, json!({"question": "获许投资资产包括哪些"})).await.unwrap();
        assert_eq!(out.result["isOffTopic"], false);
        let out = CheckOffTopic.execute(&t.ctx, json!({"question": "推荐一部好看的科幻电影吧"})).await.unwrap();
        assert_eq!(out.result["isOffTopic"], true);
        assert!(out.result["suggestion"].as_str().unwrap().contains("香港移民"));
        // The score it decided on, not a made-up confidence.
        assert_eq!(out.result["decidedBy"], "coverage", "{}", out.result);
        let score = out.result["coverage"].as_f64().unwrap();
        assert!((0.0..OFF_BELOW).contains(&score), "{}", out.result);
    }

    #[tokio::test]
    async fn cannot_decide_without_knowledge_means_not_off_topic() {
        let t = testing::context().await;
        t.ctx.db.close().await;
        let out = CheckOffTopic.execute(&t.ctx, json!({"question": "这个呢"})).await.unwrap();
        assert_eq!(out.result["isOffTopic"], false);
    }

    #[tokio::test]
    async fn a_help_center_agent_gets_its_own_words_and_no_immigration() {
        let t = testing::context().await;
        let base = crate::store::knowledge::BaseFields {
            name: "Acme Help Center",
            description: "Orders, shipping and refunds at the Acme store",
            topics: "order, refund, shipping, delivery, Acme",
        };
        t.knowledge_in(
            &base,
            &[
                (
                    "Refunds",
                    "Billing",
                    "article",
                    "Refunds are paid back to the original card within five working days.",
                ),
                (
                    "Delivery times",
                    "Shipping",
                    "article",
                    "Parcels leave the warehouse within one day and arrive in three.",
                ),
            ],
        )
        .await;
        let scope = t.ctx.services.knowledge.scope(&t.ctx.agent.id).await.unwrap();
        assert_eq!(scope.categories, vec!["Billing", "Shipping"]);
        let (description, _) = CheckOffTopic.tailored(&scope).unwrap();
        assert!(description.contains("Acme Help Center — Orders, shipping and refunds"), "{description}");
        assert!(!description.to_lowercase().contains("immigration"), "{description}");

        let on =
            CheckOffTopic.execute(&t.ctx, json!({"question": "When will my order be delivered to me?"})).await.unwrap();
        assert_eq!(on.result["isOffTopic"], false, "{}", on.result);
        // A Hong Kong visa question is off-topic for this agent.
        let off = CheckOffTopic
            .execute(&t.ctx, json!({"question": "How do I apply for a Hong Kong work visa as a graduate?"}))
            .await
            .unwrap();
        assert_eq!(off.result["isOffTopic"], true, "{}", off.result);
        let suggestion = off.result["suggestion"].as_str().unwrap();
        assert!(suggestion.contains("Acme Help Center") && suggestion.contains("Billing, Shipping"), "{suggestion}");
        assert!(!suggestion.contains("移民"), "{suggestion}");
        // In the question's script.
        let zh =
            CheckOffTopic.execute(&t.ctx, json!({"question": "推荐一部好看的科幻电影吧，谢谢你了"})).await.unwrap();
        assert!(
            zh.result["suggestion"].as_str().unwrap().starts_with("这个问题似乎与「Acme Help Center」无关"),
            "{}",
            zh.result
        );
    }
}
