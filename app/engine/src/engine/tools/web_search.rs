//! `web_search` (capability `web_search`): searches the web through Google Custom Search
//! (`GOOGLE_SEARCH_API_KEY` + `GOOGLE_CSE_ID`), at most five results. Without the keys, or when
//! the search fails, it answers `success: false` with the agent's official sites (its domain's
//! `sites`) the visitor can check.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::fetch::FetchError;
use super::{Tool, ToolContext, ToolError, ToolOutput};
use crate::secret::ApiKey;
use crate::store::agents::Site;

pub const DEFAULT_BASE: &str = "https://www.googleapis.com/customsearch/v1";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_RESULTS: usize = 5;
const MAX_QUERY_CHARS: usize = 300;

/// The language results should be in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Language {
    #[default]
    ZhCn,
    ZhTw,
    En,
}

impl Language {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "zh-CN" => Some(Language::ZhCn),
            "zh-TW" => Some(Language::ZhTw),
            "en" => Some(Language::En),
            _ => None,
        }
    }

    /// Google's `lr` parameter.
    fn lr(self) -> &'static str {
        match self {
            Language::ZhCn => "lang_zh-CN",
            Language::ZhTw => "lang_zh-TW",
            Language::En => "lang_en",
        }
    }
}

pub struct WebSearch {
    http: reqwest::Client,
    base: String,
    api_key: Option<ApiKey>,
    cse_id: Option<String>,
    timeout: Duration,
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

impl WebSearch {
    /// Searches only when both the API key and the search engine id are given.
    pub fn new(http: reqwest::Client, api_key: Option<String>, cse_id: Option<String>) -> Self {
        WebSearch {
            http,
            base: DEFAULT_BASE.to_owned(),
            api_key: api_key.and_then(ApiKey::new),
            cse_id: non_empty(cse_id),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Reads `GOOGLE_SEARCH_API_KEY` and `GOOGLE_CSE_ID`.
    pub fn from_env(http: reqwest::Client) -> Self {
        Self::new(http, std::env::var("GOOGLE_SEARCH_API_KEY").ok(), std::env::var("GOOGLE_CSE_ID").ok())
    }

    /// Points the tool at another endpoint (tests, proxies).
    pub fn with_base(mut self, base: impl Into<String>) -> Self {
        self.base = base.into();
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The tool's answer: results; the degraded answer (the agent's official sites, `suggested`)
    /// when no search service is configured; a failed call when the service failed (its reason
    /// logged, not shown).
    pub async fn search(
        &self,
        query: &str,
        site: Option<&str>,
        language: Language,
        suggested: &[Site],
    ) -> Result<Value, ToolError> {
        let (Some(key), Some(cx)) = (&self.api_key, &self.cse_id) else {
            tracing::debug!("web_search is not configured (GOOGLE_SEARCH_API_KEY / GOOGLE_CSE_ID)");
            return Ok(degraded(query, language, suggested));
        };
        let q = match site {
            Some(site) => format!("{query} site:{site}"),
            None => query.to_owned(),
        };
        let found = match tokio::time::timeout(self.timeout, self.google(key.expose(), cx, &q, language)).await {
            Ok(found) => found,
            Err(_) => Err(FetchError::Timeout(self.timeout.as_millis())),
        };
        match found {
            Ok(results) => {
                let count = results.len();
                let message = if count == 0 {
                    "没有找到相关结果，可以换个关键词再试".to_owned()
                } else {
                    format!("找到 {count} 条相关结果")
                };
                Ok(
                    json!({"success": true, "query": query, "results": results, "resultCount": count, "message": message}),
                )
            }
            Err(reason) => Err(ToolError::withheld("the web search failed; try again later", reason.to_string())),
        }
    }

    async fn google(&self, key: &str, cx: &str, q: &str, language: Language) -> Result<Vec<Value>, FetchError> {
        let num = MAX_RESULTS.to_string();
        let params = [("key", key), ("cx", cx), ("q", q), ("num", num.as_str()), ("lr", language.lr())];
        // `without_url`: the URL carries the API key.
        let response =
            self.http.get(&self.base).query(&params).timeout(self.timeout).send().await.map_err(FetchError::connect)?;
        let status = response.status();
        if !status.is_success() {
            return Err(FetchError::Status(status.as_u16()));
        }
        let body: Value = response.json().await.map_err(FetchError::unreadable)?;
        parse_items(&body)
    }
}

/// Maps Google's `items[]` to `{title, url, snippet}`, at most [`MAX_RESULTS`]. No `items` means
/// no results.
fn parse_items(body: &Value) -> Result<Vec<Value>, FetchError> {
    if !body.is_object() {
        return Err(FetchError::Answer("the answer is not a JSON object".into()));
    }
    let items = match body.get("items") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(FetchError::Answer("`items` is not a list".into())),
    };
    let text = |item: &Value, key: &str| {
        item.get(key).and_then(Value::as_str).map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    Ok(items
        .iter()
        .filter_map(|item| {
            let url = text(item, "link").filter(|u| !u.is_empty())?;
            Some(json!({
                "title": text(item, "title").unwrap_or_default(),
                "url": url,
                "snippet": text(item, "snippet").unwrap_or_default(),
            }))
        })
        .take(MAX_RESULTS)
        .collect())
}

fn degraded(query: &str, language: Language, suggested: &[Site]) -> Value {
    let sites: Vec<Value> = suggested.iter().map(|s| json!({"name": s.name, "url": s.url})).collect();
    let message = match (language, sites.is_empty()) {
        (Language::En, true) => "Web search is not available right now.",
        (Language::En, false) => {
            "Web search is not available right now. These official sites have the latest information:"
        }
        (_, true) => "网络搜索暂时无法使用。",
        (_, false) => "网络搜索暂时无法使用。请参考以下官方网站获取最新信息：",
    };
    json!({"success": false, "query": query, "results": [], "message": message, "suggestedSites": sites})
}

/// `immd.gov.hk`, also when given as `https://www.immd.gov.hk/`.
fn normalize_site(site: &str) -> Option<String> {
    let s = site.trim();
    let s = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://")).unwrap_or(s);
    let s = s.trim_end_matches('/');
    (!s.is_empty() && !s.contains(char::is_whitespace)).then(|| s.to_owned())
}

fn parse_args(args: &Value) -> Result<(String, Option<String>, Language), ToolError> {
    let query = args.get("query").and_then(Value::as_str).map(str::trim).unwrap_or_default();
    if query.is_empty() {
        return Err(ToolError::InvalidArguments("`query` must be a non-empty string".into()));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(ToolError::InvalidArguments(format!("`query` must be at most {MAX_QUERY_CHARS} characters")));
    }
    let site = match args.get("site") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => normalize_site(s),
        Some(_) => return Err(ToolError::InvalidArguments("`site` must be a domain such as immd.gov.hk".into())),
    };
    let language = match args.get("language") {
        None | Some(Value::Null) => Language::default(),
        Some(v) => v
            .as_str()
            .and_then(Language::parse)
            .ok_or_else(|| ToolError::InvalidArguments("`language` must be one of zh-CN, zh-TW, en".into()))?,
    };
    Ok((query.to_owned(), site, language))
}

#[async_trait::async_trait]
impl Tool for WebSearch {
    fn name(&self) -> &'static str {
        "web_search"
    }

    fn description(&self) -> &'static str {
        "Search the web for up-to-date information such as recent policy changes, announcements or \
         news. Use it when the answer may have changed after your knowledge or is not in the \
         knowledge base; set `site` (e.g. immd.gov.hk) to search only an official source."
    }

    fn capability(&self) -> &'static str {
        "web_search"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::OUTSIDE
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 300, "description": "What to search for, in the visitor's language."},
                "site": {"type": "string", "minLength": 1, "maxLength": 253, "pattern": "^\\S+$", "description": "Only search this site, e.g. immd.gov.hk or talentservicewindow.gov.hk."},
                "language": {"type": "string", "enum": ["zh-CN", "zh-TW", "en"], "description": "Language of the results. Defaults to zh-CN."}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let (query, site, language) = parse_args(&args)?;
        Ok(ToolOutput::result(self.search(&query, site.as_deref(), language, &ctx.agent.domain.sites).await?))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use axum::Router;
    use axum::extract::Query;
    use axum::http::StatusCode;

    use super::*;

    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/customsearch/v1")
    }

    fn tool(base: &str, key: Option<&str>, cx: Option<&str>) -> WebSearch {
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        WebSearch::new(http, key.map(str::to_owned), cx.map(str::to_owned))
            .with_base(base)
            .with_timeout(Duration::from_millis(200))
    }

    /// A server whose every request answers `status` with `body`, counting hits.
    async fn fixed(status: StatusCode, body: &'static str) -> (String, Arc<AtomicUsize>) {
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let app = Router::new().fallback(move || {
            h.fetch_add(1, Ordering::SeqCst);
            async move { (status, body) }
        });
        (serve(app).await, hits)
    }

    #[tokio::test]
    async fn an_agent_without_sites_suggests_none() {
        let out = tool("http://127.0.0.1:9", None, None).search("q", None, Language::En, &[]).await.unwrap();
        assert_eq!(
            (&out["suggestedSites"], &out["message"]),
            (&json!([]), &json!("Web search is not available right now."))
        );
    }

    /// The demo immigration agent's official sites.
    fn sites() -> Vec<Site> {
        crate::seed::immigration_domain().sites
    }

    fn assert_degraded(out: &Value, query: &str) {
        let mut keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["message", "query", "results", "success", "suggestedSites"]);
        assert_eq!((&out["success"], &out["query"], &out["results"]), (&json!(false), &json!(query), &json!([])));
        let urls: Vec<&str> =
            out["suggestedSites"].as_array().unwrap().iter().map(|s| s["url"].as_str().unwrap()).collect();
        assert_eq!(
            urls,
            ["https://www.immd.gov.hk", "https://www.talentservicewindow.gov.hk", "https://www.investhk.gov.hk"]
        );
        assert_eq!(out["suggestedSites"][0]["name"], "香港入境事务处");
    }

    #[tokio::test]
    async fn web_search_success_sends_parameters_and_keeps_five_results() {
        let seen: Arc<Mutex<Vec<HashMap<String, String>>>> = Arc::default();
        let s = seen.clone();
        let app = Router::new().fallback(move |Query(q): Query<HashMap<String, String>>| {
            s.lock().unwrap().push(q);
            async {
                let mut items: Vec<Value> = (1..=7)
                    .map(|i| json!({"title": format!("T{i}"), "link": format!("https://www.immd.gov.hk/{i}"), "snippet": format!("line\nS{i}")}))
                    .collect();
                items[0] = json!({"title": "No snippet", "link": "https://www.immd.gov.hk/0"});
                axum::Json(json!({"kind": "customsearch#search", "items": items}))
            }
        });
        let t = tool(&serve(app).await, Some("k-1"), Some("cx-1"));
        let out = t.search("香港优才计划", Some("immd.gov.hk"), Language::ZhTw, &sites()).await.unwrap();
        assert_eq!(out["success"], true);
        assert_eq!(out["query"], "香港优才计划");
        assert_eq!(out["resultCount"], 5);
        assert_eq!(out["message"], "找到 5 条相关结果");
        let results = out["results"].as_array().unwrap();
        assert_eq!(results.len(), 5);
        assert_eq!(results[0], json!({"title": "No snippet", "url": "https://www.immd.gov.hk/0", "snippet": ""}));
        assert_eq!(results[1], json!({"title": "T2", "url": "https://www.immd.gov.hk/2", "snippet": "line S2"}));
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        let q = &seen[0];
        assert_eq!(q["key"], "k-1");
        assert_eq!(q["cx"], "cx-1");
        assert_eq!(q["q"], "香港优才计划 site:immd.gov.hk");
        assert_eq!(q["num"], "5");
        assert_eq!(q["lr"], "lang_zh-TW");
    }

    #[tokio::test]
    async fn web_search_no_results_and_default_language() {
        let seen: Arc<Mutex<Vec<HashMap<String, String>>>> = Arc::default();
        let s = seen.clone();
        let app = Router::new().fallback(move |Query(q): Query<HashMap<String, String>>| {
            s.lock().unwrap().push(q);
            async { axum::Json(json!({"searchInformation": {"totalResults": "0"}})) }
        });
        let out = tool(&serve(app).await, Some("k"), Some("c"))
            .search("nothing", None, Language::default(), &sites())
            .await
            .unwrap();
        assert_eq!((&out["success"], &out["resultCount"], &out["results"]), (&json!(true), &json!(0), &json!([])));
        let q = &seen.lock().unwrap()[0];
        assert_eq!((q["q"].as_str(), q["lr"].as_str()), ("nothing", "lang_zh-CN"));
    }

    #[tokio::test]
    async fn web_search_without_keys_degrades_without_a_request() {
        let (base, hits) = fixed(StatusCode::OK, r#"{"items":[]}"#).await;
        assert_degraded(&tool(&base, None, None).search("q1", None, Language::En, &sites()).await.unwrap(), "q1");
        assert_degraded(&tool(&base, Some("k"), None).search("q2", None, Language::En, &sites()).await.unwrap(), "q2");
        assert_degraded(
            &tool(&base, Some(" "), Some("c")).search("q3", None, Language::En, &sites()).await.unwrap(),
            "q3",
        );
        assert_eq!(hits.load(Ordering::SeqCst), 0);
    }

    /// A search that failed is a failed tool call (its reason for the log and the console).
    fn assert_failed(out: Result<Value, ToolError>) {
        match out {
            Err(ToolError::Withheld { shown, .. }) => assert!(shown.contains("search failed"), "{shown}"),
            other => panic!("a failed call, not {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_web_search_server_error_is_a_failed_call() {
        let (base, hits) = fixed(StatusCode::INTERNAL_SERVER_ERROR, "{}").await;
        assert_failed(tool(&base, Some("k"), Some("c")).search("香港", None, Language::ZhCn, &sites()).await);
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_web_search_garbage_answer_is_a_failed_call() {
        for body in ["<html>nope</html>", r#"{"items": "x"}"#, "[1, 2]"] {
            let (base, hits) = fixed(StatusCode::OK, body).await;
            assert_failed(tool(&base, Some("k"), Some("c")).search("q", None, Language::ZhCn, &sites()).await);
            assert_eq!(hits.load(Ordering::SeqCst), 1, "{body}");
        }
    }

    #[tokio::test]
    async fn a_web_search_timeout_is_a_failed_call() {
        let app = Router::new().fallback(|| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            axum::Json(json!({"items": []}))
        });
        let started = Instant::now();
        let out = tool(&serve(app).await, Some("k"), Some("c")).search("slow", None, Language::ZhCn, &sites()).await;
        assert!(started.elapsed() < Duration::from_millis(1500), "took {:?}", started.elapsed());
        assert_failed(out);
    }

    #[test]
    fn web_search_arguments_and_schema() {
        let t = WebSearch::new(reqwest::Client::new(), None, None);
        assert_eq!((t.name(), t.capability()), ("web_search", "web_search"));
        let v = jsonschema::validator_for(&t.schema()).unwrap();
        assert!(v.is_valid(&json!({"query": "优才", "site": "immd.gov.hk", "language": "en"})));
        assert!(!v.is_valid(&json!({})));
        assert!(!v.is_valid(&json!({"query": ""})));
        assert!(!v.is_valid(&json!({"query": "x".repeat(301)})));
        assert!(!v.is_valid(&json!({"query": "x", "language": "fr"})));
        assert!(!v.is_valid(&json!({"query": "x", "site": "a b"})));
        assert!(!v.is_valid(&json!({"query": "x", "extra": 1})));
        assert_eq!(
            parse_args(&json!({"query": " 优才 ", "site": "https://www.immd.gov.hk/"})).unwrap(),
            ("优才".to_owned(), Some("www.immd.gov.hk".to_owned()), Language::ZhCn)
        );
        assert!(matches!(parse_args(&json!({"query": "  "})), Err(ToolError::InvalidArguments(_))));
        assert!(matches!(parse_args(&json!({"query": "x".repeat(301)})), Err(ToolError::InvalidArguments(_))));
        assert!(matches!(parse_args(&json!({"query": "x", "language": "de"})), Err(ToolError::InvalidArguments(_))));
    }
}
