//! Input to the widget API that must change nothing: too long, empty, malformed or unknown bodies,
//! unknown agents and conversations, and origins that are not allowed; exact statuses and codes.

use crate::harness::*;
use reqwest::header::{CONTENT_TYPE, ORIGIN};
use serde_json::{Value, json};

#[tokio::test]
async fn bad_input_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    app.agent("plain", &[]).await;
    app.insert_agent(
        fixtures::agent("strict", fixtures::openai_provider(&app.fake)).origins(&["https://allowed.example"]),
    )
    .await;
    let token = app.visitor("plain").await;
    let visitors_before = app.count("visitors").await;
    let chat = app.url("/api/v1/chat");
    let visitors = app.url("/api/v1/visitors");
    let raw = |url: &str, body: &'static str| {
        app.client.post(url).bearer_auth(&token).header(CONTENT_TYPE, "application/json").body(body)
    };

    let r = app.send_raw(&token, json!({"agent": "plain", "message": "x".repeat(4001)})).await;
    assert_eq!(failure(r).await, fail(413, "message_too_long"));
    for empty in ["", "   ", " \n\t "] {
        let r = app.send_raw(&token, json!({"agent": "plain", "message": empty})).await;
        assert_eq!(failure(r).await, fail(422, "empty_message"), "{empty:?}");
    }
    let r = raw(&chat, r#"{"agent": "plain", "message": }"#).send().await.unwrap();
    assert_eq!(failure(r).await, fail(400, "malformed_json"));
    let r = app.client.post(&chat).bearer_auth(&token).body(r#"{"agent":"plain","message":"hi"}"#).send().await;
    assert_eq!(failure(r.unwrap()).await, fail(415, "json_required"));
    let r = app.send_raw(&token, json!({"agent": "plain", "message": "hi", "priority": "high"})).await;
    assert_eq!(failure(r).await, fail(422, "invalid_body"));
    let r = app.send_raw(&token, json!({"agent": "plain"})).await;
    assert_eq!(failure(r).await, fail(422, "invalid_body"));
    for bad in ["".to_owned(), "c".repeat(101)] {
        let r = app.send_raw(&token, json!({"agent": "plain", "message": "hi", "client_message_id": bad})).await;
        assert_eq!(failure(r).await, fail(422, "bad_client_message_id"));
    }
    let r = app.send_raw(&token, json!({"agent": "no-such-agent", "message": "hi"})).await;
    assert_eq!(failure(r).await, fail(404, "not_found"));
    // A visitor of one agent cannot talk to another.
    let r = app.send_raw(&token, json!({"agent": "strict", "message": "hi"})).await;
    assert_eq!(failure(r).await, fail(404, "not_found"));
    let r = app.send_raw(&token, json!({"agent": "plain", "conversation_id": "no-such-conversation", "message": "hi"}));
    assert_eq!(failure(r.await).await, fail(404, "not_found"));

    let r = app.client.post(&visitors).json(&json!({"agent": "no-such-agent"})).send().await.unwrap();
    assert_eq!(failure(r).await, fail(404, "not_found"));
    let r = raw(&visitors, r#"{"agent": "plain""#).send().await.unwrap();
    assert_eq!(failure(r).await, fail(400, "malformed_json"));
    let r = app.client.post(&visitors).json(&json!({"agent": "plain", "admin": true})).send().await.unwrap();
    assert_eq!(failure(r).await, fail(422, "invalid_body"));

    // Origins: the browser's `Origin` and the declared host page must both be allowed.
    let r = app.client.post(&visitors).header(ORIGIN, "https://evil.example").json(&json!({"agent": "strict"}));
    assert_eq!(failure(r.send().await.unwrap()).await, fail(403, "origin_not_allowed"));
    let r = app.client.post(&visitors).json(&json!({"agent": "strict", "host_origin": "https://evil.example"}));
    assert_eq!(failure(r.send().await.unwrap()).await, fail(403, "origin_not_allowed"));
    let r = app
        .client
        .post(&visitors)
        .header(ORIGIN, "https://allowed.example")
        .json(&json!({"agent": "strict", "host_origin": "https://evil.example"}));
    assert_eq!(failure(r.send().await.unwrap()).await, fail(403, "origin_not_allowed"));
    let r = app
        .client
        .post(&visitors)
        .header(ORIGIN, "https://allowed.example")
        .json(&json!({"agent": "strict", "host_origin": "https://allowed.example/"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let created: Value = r.json().await.unwrap();
    let strict = created["token"].as_str().expect("a token").to_owned();
    assert!(created["visitor_id"].as_str().is_some_and(|id| !id.is_empty()));
    let r = app
        .client
        .post(&chat)
        .bearer_auth(&strict)
        .header(ORIGIN, "https://evil.example")
        .json(&json!({"agent": "strict", "message": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(failure(r).await, fail(403, "origin_not_allowed"));

    assert_eq!(app.count("messages").await, 0);
    assert_eq!(app.count("conversations").await, 0);
    assert_eq!(app.count("events").await, 0);
    assert_eq!(app.count("visitors").await, visitors_before + 1, "only the allowed visitor was created");
    assert_eq!(app.fake.served(), 0);

    // The allowed origin may chat, and 4000 characters are not too many.
    app.fake.push_content("Welcome.");
    let r = app
        .client
        .post(&chat)
        .bearer_auth(&strict)
        .header(ORIGIN, "https://allowed.example")
        .json(&json!({"agent": "strict", "message": "y".repeat(4000)}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = read_events(r).await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Welcome.");
    assert_eq!(app.count("messages").await, 2);
    assert_eq!(app.fake.served(), 1);
}
