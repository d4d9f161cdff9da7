//! Who may see what in the widget API: another visitor's conversation is not found by any route,
//! a missing or false token is refused, and nothing changes.

use crate::harness::*;
use parley_protocol::Transcript;
use serde_json::json;

#[tokio::test]
async fn another_visitors_conversation_is_not_found() {
    let app = spawn_app().await;
    app.agent("plain", &[]).await;
    let alice = app.visitor("plain").await;
    let bob = app.visitor("plain").await;
    app.fake.push_content("Hello Alice.");
    let events = app.send(&alice, "plain", None, "I am Alice").await;
    let conv = conversation_id(&events);
    let messages_before = app.count("messages").await;
    app.engine().flush().await;
    let events_before = app.count("events").await;
    assert_eq!(messages_before, 2);

    let transcript = format!("/api/v1/conversations/{conv}");
    assert_eq!(failure(app.get(&bob, &transcript).await).await, fail(404, "not_found"));
    assert_eq!(failure(app.follow(&bob, &conv, 0).await).await, fail(404, "not_found"));
    let by_query = app.get(&bob, &format!("/api/v1/conversations/{conv}/events?after=0")).await;
    assert_eq!(failure(by_query).await, fail(404, "not_found"));
    assert_eq!(failure(app.stop(&bob, &conv).await).await, fail(404, "not_found"));
    let lead = json!({"name": "Bob", "email": "bob@example.com", "message": "call me"});
    assert_eq!(
        failure(app.post(&bob, &format!("/api/v1/conversations/{conv}/lead"), lead).await).await,
        fail(404, "not_found")
    );
    let r = app.send_raw(&bob, json!({"agent": "plain", "conversation_id": conv, "message": "hijack"})).await;
    assert_eq!(failure(r).await, fail(404, "not_found"));
    let r = app
        .send_raw(
            &bob,
            json!({"agent": "plain", "conversation_id": conv, "message": "hijack", "client_message_id": "x"}),
        )
        .await;
    assert_eq!(failure(r).await, fail(404, "not_found"));

    // No token, or a token that is not one.
    let r = app.client.get(app.url(&transcript)).send().await.unwrap();
    assert_eq!(failure(r).await, fail(401, "token_required"));
    let r = app.client.post(app.url("/api/v1/chat")).json(&json!({"agent": "plain", "message": "hi"})).send().await;
    assert_eq!(failure(r.unwrap()).await, fail(401, "token_required"));
    let r = app.client.get(app.url(&transcript)).header("Authorization", "Basic abc").send().await.unwrap();
    assert_eq!(failure(r).await, fail(401, "token_required"));
    assert_eq!(failure(app.get("not-a-real-token", &transcript).await).await, fail(401, "bad_token"));
    let r = app.send_raw("not-a-real-token", json!({"agent": "plain", "conversation_id": conv, "message": "hi"})).await;
    assert_eq!(failure(r).await, fail(401, "bad_token"));
    assert_eq!(failure(app.stop("not-a-real-token", &conv).await).await, fail(401, "bad_token"));

    // The owner still sees it; a non-numeric Last-Event-ID is refused.
    assert_eq!(app.get(&alice, &transcript).await.status(), 200);
    let r = app
        .client
        .get(app.url(&format!("{transcript}/events")))
        .bearer_auth(&alice)
        .header("Last-Event-ID", "abc")
        .send()
        .await
        .unwrap();
    assert_eq!(failure(r).await, fail(400, "bad_last_event_id"));

    assert_eq!(app.count("messages").await, messages_before, "nothing new stored");
    assert_eq!(app.count("events").await, events_before);
    assert_eq!(app.count("leads").await, 0);
    assert_eq!(app.fake.served(), 1);
    let t: Transcript = app.get(&alice, &transcript).await.json().await.unwrap();
    assert_eq!((t.status.as_str(), t.lead_submitted, t.messages.len()), ("bot", false, 2));
}
