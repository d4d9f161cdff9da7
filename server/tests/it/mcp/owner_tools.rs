//! An owner-defined tool (issue 18) reaches MCP clients like a built-in one: listed for tokens of
//! agents with its capability, called over HTTP with the client's checked arguments.

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
