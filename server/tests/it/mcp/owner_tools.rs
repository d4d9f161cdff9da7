//! An owner-defined tool (issue 18) reaches MCP clients like a built-in one: listed for tokens of
//! agents with its capability, called over HTTP with the client's checked arguments.

use std::time::Duration;

use super::*;
use parley_engine::store::http_tools::{self, HttpToolFields};

#[tokio::test]
async fn owner_tools_are_listed_and_called_over_mcp() {
    let receiver = Receiver::start().await;
    let app = TestApp::builder().config(|c| c.allow_private_endpoints = true).spawn().await;
    let agent = app.agent("mcp-shop", &["orders", "datetime"]).await;
    let other = app.agent("mcp-other", &["datetime"]).await;
    let fields = HttpToolFields {
        name: "order_status".into(),
        description: "Looks up an Acme order by its number.".into(),
        capability: "orders".into(),
        parameters: json!({"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}),
        method: "GET".into(),
        url: receiver.url("/orders/{order_id}"),
        headers: Some(vec![("X-Api-Key".into(), "mcp-key-99".into())]),
        timeout_ms: 5_000,
    };
    http_tools::insert(app.db(), &fields, SystemClock.now_ms()).await.unwrap();
    app.engine().reload_tools().await.unwrap();

    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;
    let client = connect(&app, "", Some(&t)).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let listed = tools.iter().find(|t| t.name == "order_status").expect("listed");
    assert_eq!(listed.description.as_deref(), Some("Looks up an Acme order by its number."));
    assert_eq!(listed.input_schema["required"], json!(["order_id"]));
    let answer = ok_json(&call(&client, "order_status", json!({"order_id": "C-5"})).await);
    assert_eq!((answer["order"].as_str(), answer["status"].as_str()), (Some("C-5"), Some("shipped")));
    let seen = receiver.received();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].uri.as_str(), seen[0].headers["x-api-key"].as_str()), ("/orders/C-5", "mcp-key-99"));
    let refused = call(&client, "order_status", json!({})).await;
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    assert_eq!(receiver.received().len(), 1);
    client.cancel().await.unwrap();

    // An agent without the capability does not have it.
    let t = token(&app, &other, FeatureSet::Base, OutputFormat::Raw).await;
    let client = connect(&app, "", Some(&t)).await.unwrap();
    assert!(!tool_names(&client).await.contains(&"order_status".to_owned()));
    client.cancel().await.unwrap();
}

/// One token cannot hold every `/mcp` worker (issue 41, item 10): with 16 calls in progress (a
/// tool whose endpoint never answers) the 17th request of that token is refused at once with
/// `429`, while another agent's token is served; once the callers give up (their connections
/// close), the token is served again.
#[tokio::test]
async fn a_token_holds_at_most_sixteen_requests_in_progress() {
    // An endpoint that accepts and never answers: each call lasts until its caller goes.
    let hang = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hang_addr = hang.local_addr().unwrap();
    let reached = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = reached.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = hang.accept().await {
            held.push(stream);
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let app = TestApp::builder()
        .config(|c| {
            c.allow_private_endpoints = true;
            c.tool_timeout_ms = 120_000;
        })
        .spawn()
        .await;
    let agent = app.agent("mcp-slow", &["orders", "datetime"]).await;
    let other = app.agent("mcp-other", &["datetime"]).await;
    let fields = HttpToolFields {
        name: "order_status".into(),
        description: "Looks up an order.".into(),
        capability: "orders".into(),
        parameters: json!({"type": "object", "properties": {"order_id": {"type": "string"}}}),
        method: "GET".into(),
        url: format!("http://{hang_addr}/orders/{{order_id}}"),
        headers: None,
        timeout_ms: 120_000,
    };
    http_tools::insert(app.db(), &fields, SystemClock.now_ms()).await.unwrap();
    app.engine().reload_tools().await.unwrap();
    let slow = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;
    let post = |token: String, tool: &'static str| {
        let request = app
            .client
            .post(app.url("/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": tool, "arguments": {"order_id": "A-1"}}}));
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            (status, body)
        }
    };
    // Each held call on a client of its own, so that dropping it closes its connection.
    let held: Vec<_> = (0..16)
        .map(|_| {
            let request = reqwest::Client::new()
                .post(app.url("/mcp"))
                .bearer_auth(&slow)
                .header("accept", "application/json, text/event-stream")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "order_status", "arguments": {"order_id": "A-1"}}}));
            tokio::spawn(async move { request.send().await.map(|r| r.status().as_u16()) })
        })
        .collect();
    // Once the sixteen calls reached the endpoint (so all are in progress), the next is refused.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while reached.load(std::sync::atomic::Ordering::SeqCst) < 16 {
        assert!(std::time::Instant::now() < deadline, "the sixteen calls never reached the endpoint");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (status, body) = post(slow.clone(), "get_current_datetime").await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("too many MCP requests in progress"), "{body}");
    assert!(held.iter().all(|call| !call.is_finished()), "the sixteen are still in progress");
    let (status, body) =
        post(token(&app, &other, FeatureSet::Base, OutputFormat::Raw).await, "get_current_datetime").await;
    assert_eq!(status, 200, "another token is served: {body}");
    // The callers give up: their slots are freed.
    for call in &held {
        call.abort();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = post(slow.clone(), "get_current_datetime").await;
        if status == 200 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still refused after the callers went: {status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
