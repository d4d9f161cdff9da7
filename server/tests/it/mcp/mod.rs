//! The MCP server end to end, through the official Rust SDK's client (`rmcp`) over Streamable
//! HTTP and over the `mcp-stdio` subcommand, plus the Python SDK (`mcp` from PyPI) as a client
//! that is not ours: feature sets, output formats, tokens, argument errors, usage. The helpers are
//! here (an agent with knowledge and news, its tokens, SDK clients); the tests are in [`http`] and
//! [`subprocess`].

use crate::harness::*;
use parley_app::server::mcp::{FeatureSet, OutputFormat};
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::engine::tools::names;
use parley_engine::store::agents::Agent;
use parley_engine::store::knowledge::{self, KnowledgeBase, NewArticle};
use parley_engine::store::mcp_tokens;
use parley_engine::store::news::{self, NewsItem};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

mod http;
mod owner_tools;
mod sse;
mod subprocess;

type Client = RunningService<RoleClient, ()>;

const CAPABILITIES: &[&str] = &["knowledge_search", "news", "datetime", "ticket_escalation", "payments"];

const NEWS_DAY: &str = "2025-03-04";
/// The digest that holds [`NEWS_DAY`]'s news (each day's digest reports the day before).
const NEWS_DIGEST: &str = "2025-03-05";

async fn add_base(app: &TestApp, agent: &Agent, name: &str, articles: &[(&str, &str)]) -> KnowledgeBase {
    let base = knowledge::create_base(
        app.db(),
        &agent.id,
        &knowledge::BaseFields { name, description: "Test knowledge", topics: "" },
        SystemClock.now_ms(),
    )
    .await
    .unwrap();
    let articles: Vec<NewArticle> = articles
        .iter()
        .map(|(title, body)| NewArticle {
            title: (*title).into(),
            category: Some("QMAS".into()),
            kind: "article".into(),
            body: (*body).into(),
            source_url: Some("https://www.immd.gov.hk/qmas".into()),
        })
        .collect();
    app.engine().services().knowledge.add_articles(&base.id, &articles, SystemClock.now_ms()).await.unwrap();
    base
}

/// An agent with knowledge and news, and its first knowledge base.
async fn agent_with_content(app: &TestApp, key: &str) -> (Agent, KnowledgeBase) {
    let agent = app.agent(key, CAPABILITIES).await;
    let base = add_base(
        app,
        &agent,
        "Immigration",
        &[("QMAS — eligibility", "优才计划申请人须年满18岁，具备良好的中文或英文能力。")],
    )
    .await;
    let item = NewsItem {
        id: String::new(),
        category: "QMAS".into(),
        title: "优才计划新措施".into(),
        summary: "入境处公布优才计划的新安排。".into(),
        published_on: NEWS_DAY.into(),
        source: "入境事务处".into(),
        url: Some("https://www.immd.gov.hk/news".into()),
    };
    news::import(app.db(), Some(&agent.id), &[item], SystemClock.now_ms()).await.unwrap();
    (agent, base)
}

async fn token(app: &TestApp, agent: &Agent, feature_set: FeatureSet, output: OutputFormat) -> String {
    mcp_tokens::create(app.db(), &agent.id, "test", feature_set, output, None, SystemClock.now_ms()).await.unwrap().1
}

/// An SDK client on `/mcp{query}`, with a bearer token when given.
async fn connect(app: &TestApp, query: &str, bearer: Option<&str>) -> Result<Client, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(app.url(&format!("/mcp{query}")));
    if let Some(token) = bearer {
        config = config.auth_header(token);
    }
    ().serve(StreamableHttpClientTransport::from_config(config)).await.map_err(|e| e.to_string())
}

async fn tool_names(client: &Client) -> Vec<String> {
    client.list_all_tools().await.expect("tools/list").into_iter().map(|t| t.name.into_owned()).collect()
}

async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().unwrap_or_default();
    client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args)).await.expect("tools/call")
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect::<Vec<_>>().join("\n")
}

fn ok_json(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(false), "{}", text(result));
    serde_json::from_str(&text(result)).expect("raw output is JSON")
}

fn assert_sep_986(names_: &[String]) {
    for name in names_ {
        assert!(names::check(name).is_ok(), "`{name}` breaks SEP-986");
    }
}
