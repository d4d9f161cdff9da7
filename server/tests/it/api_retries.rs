//! Safe retries in the widget API: a send retried with the same `client_message_id` replays the
//! same reply (finished or still streaming) without a new turn, a new conversation or a new call.

use std::time::Duration;

use crate::harness::fixtures::words;
use crate::harness::*;
use parley_server::fake_openai::Reply;
use serde_json::json;

#[tokio::test]
async fn a_retried_send_replays_the_same_reply_without_a_new_turn() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_content("First answer.");
    let conv = conversation_id(&app.send(&token, "plain", None, "hello").await);

    app.fake.push_content("Second answer, with more words.");
    let body =
        json!({"agent": "plain", "conversation_id": conv, "message": "tell me more", "client_message_id": "cm-1"});
    let r = app.send_raw(&token, body.clone()).await;
    assert_eq!(r.status(), 200);
    let original_header = r.headers().get("x-parley-message").cloned();
    let original = read_events(r).await;
    assert_eq!(shape(&original), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&original), "Second answer, with more words.");
    assert_eq!(app.count("messages").await, 4);
    assert_eq!(app.fake.served(), 2);

    let r = app.send_raw(&token, body).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers().get("x-parley-message").cloned(), original_header);
    let retried = read_events(r).await;
    assert_eq!(message_id(&retried), message_id(&original));
    assert_eq!(retried, original, "the same events with the same ids");
    assert_eq!(app.count("messages").await, 4, "nothing new stored");
    assert_eq!(app.fake.served(), 2, "no new upstream call");

    // The same id with another message is a client's mistake, not a retry (issue 41): refused,
    // and nothing is stored or answered.
    let reused =
        json!({"agent": "plain", "conversation_id": conv, "message": "something else", "client_message_id": "cm-1"});
    let r = app.send_raw(&token, reused).await;
    assert_eq!(r.status(), 422);
    assert_eq!(r.json::<serde_json::Value>().await.unwrap()["error"], "bad_client_message_id");
    let first_again = json!({"agent": "plain", "message": "another first", "client_message_id": "cm-1"});
    assert_eq!(app.send_raw(&token, first_again).await.status(), 422, "a first message too");
    assert_eq!((app.count("messages").await, app.fake.served()), (4, 2));
}

#[tokio::test]
async fn a_retry_right_after_sending_follows_only_that_reply() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_content("First answer.");
    let conv = conversation_id(&app.send(&token, "plain", None, "hello").await);

    app.fake.push(Reply::Content { pieces: words(20), delay: Duration::from_millis(20) });
    let body = json!({"agent": "plain", "conversation_id": conv, "message": "count", "client_message_id": "cm-live"});
    let original = app.send_raw(&token, body.clone()).await;
    assert_eq!(original.status(), 200);
    // The client did not get the answer and retries at once, while it is still being written.
    let retried = app.send_raw(&token, body).await;
    assert_eq!(retried.status(), 200);
    let original = read_events(original).await;
    let retried = read_events(retried).await;
    assert_eq!(shape(&original), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&original), words(20).concat());
    assert_eq!(retried, original, "the retry follows the same reply, and only it");
    assert_eq!(app.count("messages").await, 4);
    assert_eq!(app.fake.served(), 2);
}

#[tokio::test]
async fn a_retried_first_message_does_not_open_a_second_conversation() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_content("Only once.");
    let body = json!({"agent": "plain", "message": "hello", "client_message_id": "first-1"});
    let original = read_events(app.send_raw(&token, body.clone()).await).await;
    // The client never saw the conversation id (say the response was lost) and sends again.
    let retried = read_events(app.send_raw(&token, body).await).await;
    assert_eq!(retried, original);
    assert_eq!(app.count("conversations").await, 1);
    assert_eq!(app.count("messages").await, 2);
    assert_eq!(app.fake.served(), 1);
    // The same client id from another visitor is that visitor's own message.
    let other = app.visitor("plain").await;
    app.fake.push_content("Someone else.");
    let theirs = read_events(
        app.send_raw(&other, json!({"agent": "plain", "message": "hi", "client_message_id": "first-1"})).await,
    )
    .await;
    assert_eq!(text(&theirs), "Someone else.");
    assert_ne!(conversation_id(&theirs), conversation_id(&original));
}
