//! `fetch_immigration_news` (capability `news`): the latest news the owner stored for the agent,
//! by category (one of its services); when there is none (or the database fails), the agent's
//! reference items marked `isStatic`, with its official sites. Every item is also shown as a
//! `news_card` block. (The name is seed 000's; nothing in it is particular to immigration: the
//! categories, reference items and sites are the agent's domain.)

use parley_protocol::{Block, NewsCard};
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, async_trait};
use crate::store::agents::{Agent, Domain};
use crate::store::news::{self, NewsItem};

pub struct FetchImmigrationNews;

fn card(item: &NewsItem) -> Block {
    Block::NewsCard(NewsCard {
        title: item.title.clone(),
        summary: item.summary.clone(),
        date: item.published_on.clone(),
        source: item.source.clone(),
        url: item.url.clone(),
        fallback_text: format!("{}（{}，{}）", item.title, item.source, item.published_on),
    })
}

fn item_json(item: &NewsItem) -> Value {
    json!({"title": item.title, "summary": item.summary, "date": item.published_on, "source": item.source, "url": item.url})
}

/// Whether the agent's words are Chinese (its language setting, else its greeting's script).
fn speaks_zh(agent: &Agent) -> bool {
    crate::lang::Lang::of_agent(agent.language, &agent.greeting).is_zh()
}

/// The static reference answer for a category (`ALL`: every category): the agent's reference
/// items, credited to its first official site, and its official sites.
pub fn static_answer(agent: &Agent, category: &str, limit: usize) -> (Value, Vec<Block>) {
    let domain = &agent.domain;
    let first_site = domain.sites.first();
    let items: Vec<NewsItem> = domain
        .reference_news
        .iter()
        .filter(|n| category == "ALL" || n.category == category || n.category == "ALL")
        .take(limit)
        .map(|n| NewsItem {
            id: String::new(),
            category: n.category.clone(),
            title: n.title.clone(),
            summary: n.summary.clone(),
            published_on: String::new(),
            source: first_site.map(|s| s.name.clone()).unwrap_or_default(),
            url: first_site.map(|s| s.url.clone()),
        })
        .collect();
    let zh = speaks_zh(agent);
    let label = match (category, zh) {
        ("ALL", true) => "各类别".to_owned(),
        ("ALL", false) => "every category".to_owned(),
        (c, _) => domain.service(c).map_or(c, |s| s.name.as_str()).to_owned(),
    };
    let message = match (zh, first_site) {
        (true, Some(site)) => format!("以下是{label}的参考信息。如需最新资讯，请访问{}。", site.name),
        (true, None) => format!("以下是{label}的参考信息。"),
        (false, Some(site)) => format!("Reference information on {label}. For the latest, see {}.", site.name),
        (false, None) => format!("Reference information on {label}."),
    };
    let result = json!({
        "success": true,
        "category": category,
        "news": items.iter().map(item_json).collect::<Vec<_>>(),
        "isStatic": true,
        "message": message,
        "officialSources": domain.sites.iter().map(|s| json!({"name": s.name, "url": s.url})).collect::<Vec<_>>(),
    });
    (result, items.iter().map(card).collect())
}

#[async_trait]
impl Tool for FetchImmigrationNews {
    fn name(&self) -> &'static str {
        "fetch_immigration_news"
    }

    fn description(&self) -> &'static str {
        "Get the latest news and announcements the agent's owner published, optionally for one category."
    }

    fn capability(&self) -> &'static str {
        "news"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::OUTSIDE
    }

    fn for_domain(&self, domain: &Domain) -> Option<Value> {
        super::with_domain_category(self.schema(), domain, true)
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "category": super::any_category(),
                "limit": {"type": "integer", "minimum": 1, "maximum": 10}
            },
            "additionalProperties": false
        })
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let category = args.get("category").and_then(Value::as_str).unwrap_or("ALL");
        if category != "ALL" {
            super::check_category(&ctx.agent, category)?;
        }
        let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(5) as usize;
        let filter = (category != "ALL").then_some(category);
        let items = match news::latest(&ctx.db, &ctx.agent.id, filter, limit as i64).await {
            Ok(items) => items,
            Err(e) => {
                tracing::warn!(error = %e, "reading news");
                Vec::new()
            }
        };
        if items.is_empty() {
            let (result, blocks) = static_answer(&ctx.agent, category, limit);
            return Ok(ToolOutput { result, blocks });
        }
        let label = if category == "ALL" { String::new() } else { category.to_owned() };
        let message = if speaks_zh(&ctx.agent) {
            format!("获取到 {} 条{label}相关新闻", items.len())
        } else {
            format!("{} {label} news items", items.len()).replace("  ", " ")
        };
        Ok(ToolOutput {
            result: json!({
                "success": true,
                "category": category,
                "news": items.iter().map(item_json).collect::<Vec<_>>(),
                "message": message,
            }),
            blocks: items.iter().map(card).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tools::testing;

    fn item(category: &str, title: &str, date: &str) -> NewsItem {
        NewsItem {
            id: String::new(),
            category: category.into(),
            title: title.into(),
            summary: "摘要".into(),
            published_on: date.into(),
            source: "香港入境事务处".into(),
            url: Some("https://www.immd.gov.hk".into()),
        }
    }

    #[tokio::test]
    async fn stored_news_by_category_and_limit_with_cards() {
        let t = testing::context().await;
        let items = [
            item("QMAS", "优才新闻一", "2025-01-02"),
            item("QMAS", "优才新闻二", "2025-03-04"),
            item("TTPS", "高才通新闻", "2025-02-01"),
            item("ALL", "综合新闻", "2024-12-01"),
        ];
        news::import(&t.ctx.db, None, &items, 0).await.unwrap();
        let out = FetchImmigrationNews.execute(&t.ctx, json!({"category": "QMAS", "limit": 2})).await.unwrap();
        let r = &out.result;
        assert_eq!(r["success"], true);
        assert!(r.get("isStatic").is_none());
        assert_eq!(r["news"][0]["title"], "优才新闻二");
        assert_eq!(r["news"].as_array().unwrap().len(), 2);
        assert_eq!(r["message"], "获取到 2 条QMAS相关新闻");
        assert_eq!(out.blocks.len(), 2);
        assert!(matches!(&out.blocks[0], Block::NewsCard(c) if c.title == "优才新闻二" && c.date == "2025-03-04"));
        let all = FetchImmigrationNews.execute(&t.ctx, json!({})).await.unwrap();
        assert_eq!(all.result["news"].as_array().unwrap().len(), 4);
    }

    #[tokio::test]
    async fn no_news_gives_the_static_reference() {
        let t = testing::context().await;
        let out = FetchImmigrationNews.execute(&t.ctx, json!({"category": "TTPS"})).await.unwrap();
        let r = &out.result;
        assert_eq!(r["isStatic"], true);
        assert_eq!(r["category"], "TTPS");
        assert_eq!(r["news"][0]["title"], "高才通计划按三类准则受理申请");
        assert_eq!(r["officialSources"][0]["name"], "香港入境事务处");
        assert_eq!(r["officialSources"][1]["url"], "https://www.talentservicewindow.gov.hk");
        assert_eq!(out.blocks.len(), 1);
    }

    #[tokio::test]
    async fn an_agent_without_a_domain_gets_no_reference_and_any_category() {
        let mut t = testing::context().await;
        let mut agent = (*t.ctx.agent).clone();
        agent.domain = Domain::default();
        agent.language = parley_protocol::LanguageSetting::En;
        t.ctx.agent = std::sync::Arc::new(agent);
        assert!(FetchImmigrationNews.for_domain(&t.ctx.agent.domain).is_none());
        let out = FetchImmigrationNews.execute(&t.ctx, json!({"category": "ANYTHING"})).await.unwrap();
        assert_eq!(out.result["isStatic"], true);
        assert_eq!(out.result["news"], json!([]));
        assert_eq!(out.result["officialSources"], json!([]));
        assert_eq!(out.result["message"], "Reference information on ANYTHING.");
    }

    #[tokio::test]
    async fn a_category_the_agent_does_not_list_is_refused() {
        let t = testing::context().await;
        let schema = FetchImmigrationNews.for_domain(&t.ctx.agent.domain).unwrap();
        assert_eq!(schema["properties"]["category"]["enum"][0], "TTPS");
        assert_eq!(schema["properties"]["category"]["enum"].as_array().unwrap().last().unwrap(), "ALL");
        let err = FetchImmigrationNews.execute(&t.ctx, json!({"category": "PIRATES"})).await.unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(ref m) if m.contains("QMAS")), "{err:?}");
    }

    #[tokio::test]
    async fn database_failure_gives_the_static_reference() {
        let t = testing::context().await;
        t.ctx.db.close().await;
        let out = FetchImmigrationNews.execute(&t.ctx, json!({"limit": 3})).await.unwrap();
        assert_eq!(out.result["isStatic"], true);
        assert_eq!(out.result["news"].as_array().unwrap().len(), 3);
    }
}
