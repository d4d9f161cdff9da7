//! The HTTP+SSE transport (protocol 2024-11-05) at `/sse/mcp`, spoken by hand: the token rules,
//! the `endpoint` event, posted messages answered on the stream, bad posts refused, a revoked
//! token refused inside an open session, and the session gone with its stream.

use super::*;

/// Reads the events of an SSE response as (event name, data) pairs.
struct SseReader {
    response: reqwest::Response,
    parser: parley_protocol::sse::SseParser,
    frames: std::collections::VecDeque<parley_protocol::sse::SseFrame>,
}

impl SseReader {
    fn new(response: reqwest::Response) -> Self {
        SseReader { response, parser: Default::default(), frames: Default::default() }
    }

    async fn next(&mut self) -> (String, String) {
        loop {
            if let Some(frame) = self.frames.pop_front() {
                return (frame.event.unwrap_or_else(|| "message".into()), frame.data);
            }
            let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event within 10 s")
                .expect("the stream reads")
                .expect("the stream is still open");
            self.frames.extend(self.parser.feed_bytes(&chunk).expect("utf-8"));
        }
    }

    /// The next `message` event, as JSON.
    async fn message(&mut self) -> Value {
        let (event, data) = self.next().await;
        assert_eq!(event, "message", "{data}");
        serde_json::from_str(&data).expect("a JSON-RPC message")
    }
}

#[tokio::test]
async fn mcp_sse_transport_serves_the_tools_of_a_session() {
    let app = spawn_app().await;
    let (agent, _) = agent_with_content(&app, "mcp-sse").await;
    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;

    assert_eq!(app.client.get(app.url("/sse/mcp")).send().await.unwrap().status(), 401);
    assert_eq!(app.client.get(app.url("/sse/mcp?token=pm_nope")).send().await.unwrap().status(), 401);

    let opened = app.client.get(app.url(&format!("/sse/mcp?token={t}&output=text"))).send().await.unwrap();
    assert_eq!(opened.status(), 200);
    assert!(opened.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let mut stream = SseReader::new(opened);
    let (event, endpoint) = stream.next().await;
    assert_eq!(event, "endpoint");
    assert!(endpoint.starts_with("/sse/mcp/message?sessionId="), "{endpoint}");
    let post =
        |body: String| app.client.post(app.url(&endpoint)).header("content-type", "application/json").body(body).send();

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "by-hand", "version": "1"}}});
    assert_eq!(post(init.to_string()).await.unwrap().status(), 202);
    let reply = stream.message().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["serverInfo"]["name"], "parley");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(initialized.to_string()).await.unwrap().status(), 202);

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(post(list.to_string()).await.unwrap().status(), 202);
    let tools = stream.message().await;
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"ListAvailableKnowledgeBases") && names.contains(&"GetTrendingQuestions"), "{names:?}");

    // The query's output setting holds for the session: text, not JSON.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "ListAvailableKnowledgeBases", "arguments": {}}});
    assert_eq!(post(call.to_string()).await.unwrap().status(), 202);
    let listed = stream.message().await;
    let out = listed["result"]["content"][0]["text"].as_str().unwrap();
    assert!(out.contains("Immigration") && serde_json::from_str::<Value>(out).is_err(), "{out}");

    // Bad posts change nothing and say why.
    let garbage = post("{not json".into()).await.unwrap();
    assert_eq!(garbage.status(), 400);
    let unknown =
        app.client.post(app.url("/sse/mcp/message?sessionId=0000")).body(list.to_string()).send().await.unwrap();
    assert_eq!(unknown.status(), 404);
    assert_eq!(app.client.post(app.url("/sse/mcp/message")).body(list.to_string()).send().await.unwrap().status(), 400);

    // A token revoked while its session is open stops working at the next request.
    let id = mcp_tokens::list(app.db(), Some(&agent.id)).await.unwrap()[0].id.clone();
    assert!(mcp_tokens::revoke(app.db(), &id, Some(&agent.id), SystemClock.now_ms()).await.unwrap());
    let again = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    assert_eq!(post(again.to_string()).await.unwrap().status(), 202);
    let refused = stream.message().await;
    assert_eq!(refused["id"], 4);
    assert!(refused["error"]["message"].as_str().unwrap().contains("revoked"), "{refused}");

    // The session ends with its stream.
    drop(stream);
    let mut gone = 0;
    for _ in 0..50 {
        gone = post(again.to_string()).await.unwrap().status().as_u16();
        if gone == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(gone, 404, "a session outlived its stream");
}

/// Unthrottled MCP work (issue 41, item 10): requests are counted per address before any token
/// is looked up, a token refused once is refused again without the database, and one token holds
/// a bounded number of SSE sessions.
#[tokio::test]
async fn mcp_requests_are_limited_per_address_refused_tokens_are_remembered_and_sessions_capped() {
    let app = TestApp::builder().config(|c| c.limits.limit_mcp_per_ip = 40).spawn().await;
    let (agent, _) = agent_with_content(&app, "mcp-limits").await;
    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;
    let garbage = "pm_not-a-token-at-all";
    for _ in 0..3 {
        let r = app.client.get(app.url(&format!("/sse/mcp?token={garbage}"))).send().await.unwrap();
        assert_eq!(r.status(), 401);
    }
    let metrics = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("parley_mcp_tokens_refused_total{cached=\"true\"} 2"), "{metrics}");
    assert!(metrics.contains("parley_mcp_tokens_refused_total{cached=\"false\"} 1"), "{metrics}");

    // Sixteen sessions of one token; the seventeenth is refused until one closes.
    let mut open = Vec::new();
    for _ in 0..16 {
        let r = app.client.get(app.url(&format!("/sse/mcp?token={t}"))).send().await.unwrap();
        assert_eq!(r.status(), 200);
        open.push(r);
    }
    let r = app.client.get(app.url(&format!("/sse/mcp?token={t}"))).send().await.unwrap();
    assert_eq!(r.status(), 429, "{}", r.text().await.unwrap());
    drop(open.pop());
    let mut reopened = None;
    for _ in 0..50 {
        let r = app.client.get(app.url(&format!("/sse/mcp?token={t}"))).send().await.unwrap();
        if r.status() == 200 {
            reopened = Some(r);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(reopened.is_some(), "room again once a session closed");

    // The address's allowance (40 a minute here) runs out: refused before any token is read.
    let mut limited = false;
    for _ in 0..40 {
        let r = app.client.get(app.url(&format!("/sse/mcp?token={garbage}"))).send().await.unwrap();
        if r.status() == 429 {
            limited = true;
            break;
        }
    }
    assert!(limited, "the per-address limit refuses at last");
}
