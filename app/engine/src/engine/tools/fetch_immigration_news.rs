//! `fetch_immigration_news` (capability `news`): the latest immigration news from the database,
//! by category; when there is none (or the database fails), a static reference answer marked
//! `isStatic` with the official sources. Every item is also shown as a `news_card` block.

use parley_protocol::{Block, NewsCard};
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, async_trait};
use crate::engine::payments::CATEGORIES;
use crate::store::news::{self, NewsItem};

pub struct FetchImmigrationNews;

/// Where the latest news is official (seed 000's `officialSources`; the same sites `web_search`
/// suggests, a test keeps them alike).
pub(super) const OFFICIAL_SOURCES: &[(&str, &str)] = &[
    ("香港入境事务处", "https://www.immd.gov.hk/hks/services/visas/admission_talents.html"),
    ("香港人才服务窗口", "https://www.talentservicewindow.gov.hk"),
];

/// Reference items used when no news is stored: `(category, title, summary)`.
const STATIC: &[(&str, &str, &str)] = &[
    (
        "QMAS",
        "优才计划全年接受申请",
        "优才计划面向具备专业技能或杰出成就的人士，全年接受申请，按入境处公布的评核准则甄选。",
    ),
    (
        "GEP",
        "专才计划需具备确认的工作聘约",
        "一般就业政策（专才）申请人须已获香港雇主聘用，职位与学历或经验相关，薪酬福利须符合市场水平。",
    ),
    (
        "IANG",
        "非本地毕业生可申请留港或回港就业",
        "在香港修读全日制经评审学位课程的非本地毕业生，可按安排申请留港或回港就业，具体期限以入境处公布为准。",
    ),
    (
        "TTPS",
        "高才通计划按三类准则受理申请",
        "高端人才通行证计划按年收入或合资格大学学历及工作经验分为A、B、C三类，C类设有年度名额。",
    ),
    (
        "CIES",
        "新资本投资者入境计划持续接受申请",
        "申请人须在香港投资指定金额的获许投资资产，其中部分须注入资本投资者入境计划投资组合。",
    ),
    ("TECHTAS", "科技人才入境计划以配额方式运作", "合资格科技公司或机构可申请配额，为指定科技范畴输入非本地科研人才。"),
];

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

/// The static reference answer for a category (`ALL`: every category).
pub fn static_answer(category: &str, limit: usize) -> (Value, Vec<Block>) {
    let items: Vec<NewsItem> = STATIC
        .iter()
        .filter(|(c, _, _)| category == "ALL" || *c == category)
        .take(limit)
        .map(|(c, title, summary)| NewsItem {
            id: String::new(),
            category: (*c).into(),
            title: (*title).into(),
            summary: (*summary).into(),
            published_on: "2024-01".into(),
            source: "香港入境事务处".into(),
            url: Some(OFFICIAL_SOURCES[0].1.into()),
        })
        .collect();
    let label = if category == "ALL" { "各类别" } else { category };
    let result = json!({
        "success": true,
        "category": category,
        "news": items.iter().map(item_json).collect::<Vec<_>>(),
        "isStatic": true,
        "message": format!("以下是{label}的参考信息。如需最新资讯，请访问香港入境事务处官网。"),
        "officialSources": OFFICIAL_SOURCES.iter().map(|(n, u)| json!({"name": n, "url": u})).collect::<Vec<_>>(),
    });
    (result, items.iter().map(card).collect())
}

#[async_trait]
impl Tool for FetchImmigrationNews {
    fn name(&self) -> &'static str {
        "fetch_immigration_news"
    }

    fn description(&self) -> &'static str {
        "Get the latest Hong Kong immigration news and policy announcements, optionally for one scheme."
    }

    fn capability(&self) -> &'static str {
        "news"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::OUTSIDE
    }

    fn schema(&self) -> Value {
        let mut categories: Vec<&str> = CATEGORIES.to_vec();
        categories.push("ALL");
        json!({
            "type": "object",
            "properties": {
                "category": {"type": "string", "enum": categories},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10}
            },
            "additionalProperties": false
        })
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let category = args.get("category").and_then(Value::as_str).unwrap_or("ALL");
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
            let (result, blocks) = static_answer(category, limit);
            return Ok(ToolOutput { result, blocks });
        }
        let label = if category == "ALL" { String::new() } else { category.to_owned() };
        Ok(ToolOutput {
            result: json!({
                "success": true,
                "category": category,
                "news": items.iter().map(item_json).collect::<Vec<_>>(),
                "message": format!("获取到 {} 条{label}相关移民新闻", items.len()),
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
        assert_eq!(r["message"], "获取到 2 条QMAS相关移民新闻");
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

    #[test]
    fn official_sources_are_sites_web_search_suggests() {
        let host = |u: &str| url::Url::parse(u).unwrap().host_str().unwrap().to_owned();
        for (name, url) in OFFICIAL_SOURCES {
            let suggested = super::super::web_search::SUGGESTED_SITES.iter().find(|(_, u)| host(u) == host(url));
            assert_eq!(suggested.map(|(n, _)| *n), Some(*name), "{url}");
        }
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
