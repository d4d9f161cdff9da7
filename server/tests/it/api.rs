//! The widget HTTP API end to end: stopping and resuming streams, who may see what, input that
//! must change nothing, the lead form, transcripts, safe retries, busy conversations, history
//! and recovery after a restart. Exact statuses, error codes, event sequences and stored rows.

use std::pin::Pin;
use std::time::Duration;

use crate::harness::*;
use futures::{Stream, StreamExt};
use parley_app::server::store::{leads, messages};
use parley_server::fake_openai::Reply;
use parley_widget::protocol::{Handoff, MessageEnd, MessageStatus, Role, StreamEvent, ToolCallStatus, Transcript};
use parley_widget::sse::SseParser;
use reqwest::header::{CONTENT_TYPE, ORIGIN};
use serde_json::{Value, json};

type Events = Vec<(u64, StreamEvent)>;

/// An SSE response read a piece at a time.
struct Live {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    parser: SseParser,
    events: Events,
}

impl Live {
    fn new(r: reqwest::Response) -> Live {
        assert_eq!(r.status(), 200, "an SSE answer");
        let content_type = r.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        assert!(content_type.starts_with("text/event-stream"), "content type {content_type:?}");
        Live { body: Box::pin(r.bytes_stream()), parser: SseParser::new(), events: Vec::new() }
    }

    async fn until(&mut self, stop: impl Fn(&[(u64, StreamEvent)]) -> bool) {
        read_until(&mut self.body, &mut self.parser, &mut self.events, stop).await;
    }

    /// Reads until a `message_end` arrives.
    async fn until_end(&mut self) {
        self.until(|events| events.iter().any(|(_, e)| matches!(e, StreamEvent::MessageEnd(_)))).await;
    }

    /// The stream ends (nothing more than what was read).
    async fn assert_ends(&mut self) {
        match tokio::time::timeout(Duration::from_secs(5), self.body.next()).await {
            Ok(None) => {}
            Ok(Some(Ok(bytes))) => panic!("more after the end: {bytes:?}"),
            Ok(Some(Err(e))) => panic!("stream error: {e}"),
            Err(_) => panic!("the stream did not end after message_end"),
        }
    }
}

fn tokens(events: &[(u64, StreamEvent)]) -> usize {
    events.iter().filter(|(_, e)| matches!(e, StreamEvent::Token(_))).count()
}

fn seqs(events: &[(u64, StreamEvent)]) -> Vec<u64> {
    events.iter().map(|(s, _)| *s).collect()
}

fn consecutive(from: u64, n: usize) -> Vec<u64> {
    (from..from + n as u64).collect()
}

/// The status and the JSON error code of an error answer.
async fn failure(r: reqwest::Response) -> (u16, String) {
    let status = r.status().as_u16();
    let body: Value = r.json().await.expect("a JSON error body");
    (status, body["error"].as_str().expect("an error code").to_owned())
}

fn fail(status: u16, code: &str) -> (u16, String) {
    (status, code.to_owned())
}

/// `GET /api/v1/conversations/{id}/events` with `Last-Event-ID`.
async fn follow(app: &TestApp, base: &str, token: &str, conversation: &str, last_event_id: u64) -> reqwest::Response {
    app.client
        .get(format!("{base}/api/v1/conversations/{conversation}/events"))
        .bearer_auth(token)
        .header("Last-Event-ID", last_event_id.to_string())
        .send()
        .await
        .unwrap()
}

async fn stop(app: &TestApp, token: &str, conversation: &str) -> reqwest::Response {
    app.client
        .post(app.url(&format!("/api/v1/conversations/{conversation}/stop")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

async fn stopped(app: &TestApp, token: &str, conversation: &str) -> bool {
    let r = stop(app, token, conversation).await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    body["stopped"].as_bool().expect("`stopped` is a boolean")
}

/// The conversation's turn slot is free again (a stop finds nothing to stop).
async fn wait_turn_released(app: &TestApp, token: &str, conversation: &str) {
    eventually(async || !stopped(app, token, conversation).await).await;
}

fn words(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("w{i} ")).collect()
}

#[tokio::test]
async fn stop_mid_stream_keeps_the_partial_answer_and_closes_the_upstream() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
    app.fake.push(Reply::Endless { piece: "word ".into(), every: Duration::from_millis(20) });

    let mut live = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "talk forever"})).await);
    live.until(|e| tokens(e) >= 3).await;
    let conv = conversation_id(&live.events);
    assert_eq!(app.fake.open_streams(), 1);

    let r = stop(&app, &token, &conv).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"stopped": true}));

    live.until_end().await;
    live.assert_ends().await;
    let events = live.events;
    assert_eq!(shape(&events), ["message_start", "token*", "error:USER_ABORTED", "message_end:stopped"]);
    // The visitor's message is event 1; the answer follows without gaps.
    assert_eq!(seqs(&events), consecutive(2, events.len()));
    let StreamEvent::MessageEnd(end) = &events.last().unwrap().1 else { unreachable!() };
    assert_eq!(end.message_id, message_id(&events));
    let streamed = text(&events);
    assert!(tokens(&events) >= 3 && streamed == "word ".repeat(tokens(&events)), "{streamed:?}");

    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!((stored[1].role, stored[1].status), (Role::Assistant, MessageStatus::Stopped));
    assert_eq!(stored[1].id, message_id(&events));
    assert_eq!(stored[1].content, streamed, "the partial answer is what the visitor saw");

    tokio::time::timeout(Duration::from_secs(1), eventually(async || app.fake.closed_early() == 1))
        .await
        .expect("the upstream stream was closed within 1 s of the stop");
    eventually(async || app.fake.open_streams() == 0).await;
    assert_eq!(app.fake.served(), 1);
    // Nothing is left to stop.
    wait_turn_released(&app, &token, &conv).await;
}

#[tokio::test]
async fn a_dropped_stream_resumes_after_last_event_id_without_gaps_or_duplicates() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
    let pieces = words(30);
    let full = pieces.concat();
    app.fake.push(Reply::Content { pieces, delay: Duration::from_millis(15) });

    let mut first = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "count"})).await);
    first.until(|e| tokens(e) >= 5).await;
    let head = std::mem::take(&mut first.events);
    drop(first);
    assert!(!head.iter().any(|(_, e)| matches!(e, StreamEvent::MessageEnd(_))), "dropped mid-answer: {head:?}");
    let last = head.last().unwrap().0;
    let conv = conversation_id(&head);

    let mut rest = Live::new(follow(&app, &app.running.url(), &token, &conv, last).await);
    rest.until_end().await;
    let tail = std::mem::take(&mut rest.events);
    drop(rest);
    assert_eq!(tail[0].0, last + 1, "resumes right after Last-Event-ID");
    assert_eq!(seqs(&tail), consecutive(last + 1, tail.len()), "no gap, no duplicate");
    assert!(tokens(&tail) > 0, "the resumed part carries the rest of the text");

    let whole: Events = head.iter().chain(tail.iter()).cloned().collect();
    assert_eq!(seqs(&whole), consecutive(2, whole.len()));
    assert_eq!(shape(&whole), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&whole), full);
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!((stored[1].status, stored[1].content.as_str()), (MessageStatus::Complete, full.as_str()));

    // Once the turn is over (and out of memory), the whole turn replays from the database.
    wait_turn_released(&app, &token, &conv).await;
    let mut replay = Live::new(follow(&app, &app.running.url(), &token, &conv, 1).await);
    replay.until_end().await;
    assert_eq!(replay.events, whole, "the replay has the same events with the same ids");
    // From the start it begins with the visitor's message.
    let mut from_start = Live::new(follow(&app, &app.running.url(), &token, &conv, 0).await);
    from_start.until_end().await;
    assert!(matches!(&from_start.events[0], (1, StreamEvent::VisitorMessage(_))));
    assert_eq!(&from_start.events[1..], &whole[..]);
}

#[tokio::test]
async fn another_visitors_conversation_is_not_found() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let alice = app.visitor("plain").await;
    let bob = app.visitor("plain").await;
    app.fake.push_content("Hello Alice.");
    let events = app.send(&alice, "plain", None, "I am Alice").await;
    let conv = conversation_id(&events);
    let messages_before = app.count("messages").await;
    app.running.state.engine.flush().await;
    let events_before = app.count("events").await;
    assert_eq!(messages_before, 2);

    let transcript = format!("/api/v1/conversations/{conv}");
    assert_eq!(failure(app.get(&bob, &transcript).await).await, fail(404, "not_found"));
    assert_eq!(failure(follow(&app, &app.running.url(), &bob, &conv, 0).await).await, fail(404, "not_found"));
    let by_query = app.get(&bob, &format!("/api/v1/conversations/{conv}/events?after=0")).await;
    assert_eq!(failure(by_query).await, fail(404, "not_found"));
    assert_eq!(failure(stop(&app, &bob, &conv).await).await, fail(404, "not_found"));
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
    assert_eq!(failure(stop(&app, "not-a-real-token", &conv).await).await, fail(401, "bad_token"));

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

#[tokio::test]
async fn bad_input_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    app.agent_with("strict", &[], None, &["https://allowed.example"]).await;
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

#[tokio::test]
async fn lead_form_validates_then_hands_the_conversation_to_a_person() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
    app.fake.push_content("How can I help?");
    let events = app.send(&token, "plain", None, "I need a person").await;
    let conv = conversation_id(&events);
    let last = events.last().unwrap().0;
    let lead = format!("/api/v1/conversations/{conv}/lead");
    let transcript = format!("/api/v1/conversations/{conv}");

    // Opened before the form is sent; `?after=` works like `Last-Event-ID`.
    let mut live = Live::new(app.get(&token, &format!("/api/v1/conversations/{conv}/events?after={last}")).await);

    let r = app.post(&token, &lead, json!({"name": "  ", "message": "please call"})).await;
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "invalid_form");
    let fields: Vec<&str> =
        body["fields"].as_array().expect("fields").iter().map(|f| f["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["name", "email"]);
    let r = app.post(&token, &lead, json!({"name": "Ann", "email": "ann@", "message": ""})).await;
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["fields"][0]["field"], "email");
    assert_eq!(app.count("leads").await, 0);
    let t: Value = app.get(&token, &transcript).await.json().await.unwrap();
    assert_eq!((&t["status"], &t["lead_submitted"]), (&json!("bot"), &json!(false)));

    let r =
        app.post(&token, &lead, json!({"name": " Ann ", "email": "ann@example.com", "message": "Please call"})).await;
    assert_eq!(r.status(), 201);
    let body: Value = r.json().await.unwrap();
    let lead_id = body["lead_id"].as_str().expect("lead_id").to_owned();
    let stored = leads::of_conversation(app.db(), &conv).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, lead_id);
    assert_eq!((stored[0].name.as_str(), stored[0].email.as_deref()), ("Ann", Some("ann@example.com")));

    let t: Value = app.get(&token, &transcript).await.json().await.unwrap();
    assert_eq!(t["status"], "waiting_human");
    assert_eq!(t["lead_submitted"], true);

    live.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::Handoff(_)))).await;
    assert_eq!(
        live.events,
        [(last + 1, StreamEvent::Handoff(Handoff { to: "waiting".into(), operator_name: None }))],
        "exactly the handoff, numbered after the turn"
    );
}

#[tokio::test]
async fn transcript_after_a_tool_turn_has_blocks_tool_calls_and_start_seq() {
    let app = spawn_app().await;
    app.agent("help", &["ticket_escalation"], None).await;
    let token = app.visitor("help").await;
    app.fake.push_tool_call("escalate_to_human", json!({}));
    app.fake.push_content("Press the button below.");
    let events = app.send(&token, "help", None, "I want a person").await;
    assert_eq!(
        shape(&events)[..5],
        [
            "message_start",
            "usage",
            "tool_call:escalate_to_human:started",
            "tool_call:escalate_to_human:succeeded",
            "block:escalation_button"
        ]
    );
    let conv = conversation_id(&events);
    let start_seq = events.iter().find(|(_, e)| matches!(e, StreamEvent::MessageStart(_))).unwrap().0;
    let block =
        events.iter().find_map(|(_, e)| if let StreamEvent::Block(b) = e { Some(b.block.clone()) } else { None });
    let call_id = events.iter().find_map(|(_, e)| match e {
        StreamEvent::ToolCall(t) if t.status == ToolCallStatus::Succeeded => Some(t.call_id.clone()),
        _ => None,
    });

    let r = app.get(&token, &format!("/api/v1/conversations/{conv}")).await;
    assert_eq!(r.status(), 200);
    let raw: Value = r.json().await.unwrap();
    // The wire format itself.
    assert_eq!(raw["conversation_id"], conv.as_str());
    let wire = raw["messages"].as_array().expect("messages");
    assert_eq!(wire.len(), 2);
    assert_eq!(wire[0]["role"], "visitor");
    assert_eq!(wire[0]["start_seq"], 0);
    assert_eq!(wire[1]["role"], "assistant");
    assert_eq!(wire[1]["blocks"].as_array().unwrap().len(), 1);
    assert_eq!(wire[1]["blocks"][0]["type"], "escalation_button");
    assert_eq!(wire[1]["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(wire[1]["tool_calls"][0]["name"], "escalate_to_human");
    assert_eq!(wire[1]["tool_calls"][0]["status"], "succeeded");

    let t: Transcript = serde_json::from_value(raw).expect("a transcript");
    assert_eq!((t.status.as_str(), t.lead_submitted), ("bot", false));
    let visitor = &t.messages[0];
    assert_eq!(
        (visitor.role, visitor.text.as_str(), visitor.status),
        (Role::Visitor, "I want a person", MessageStatus::Complete)
    );
    assert!(visitor.blocks.is_empty() && visitor.tool_calls.is_empty());
    let answer = &t.messages[1];
    assert_eq!(answer.id, message_id(&events));
    assert_eq!((answer.text.as_str(), answer.status), ("Press the button below.", MessageStatus::Complete));
    assert_eq!(Some(answer.blocks.clone()), block.map(|b| vec![b]), "the block as streamed");
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(Some(answer.tool_calls[0].call_id.clone()), call_id);
    assert_eq!(
        (answer.tool_calls[0].name.as_str(), answer.tool_calls[0].status),
        ("escalate_to_human", ToolCallStatus::Succeeded)
    );
    assert!(answer.tool_calls[0].duration_ms.is_some());
    assert_eq!(answer.start_seq, start_seq, "start_seq is the seq of the message_start event");
    assert!(answer.created_at >= visitor.created_at);
}

#[tokio::test]
async fn a_streaming_answer_has_its_start_seq_in_the_transcript_at_once() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
    app.fake.push_content("First answer.");
    let conv = conversation_id(&app.send(&token, "plain", None, "hello").await);

    app.fake.push(Reply::Endless { piece: "more ".into(), every: Duration::from_millis(20) });
    let body = json!({"agent": "plain", "conversation_id": conv, "message": "go on"});
    let mut live = Live::new(app.send_raw(&token, body).await);
    live.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::MessageStart(_)))).await;
    let start_seq = live.events[0].0;
    // A panel reloaded now resumes the answer from `start_seq - 1`.
    let t: Transcript = app.get(&token, &format!("/api/v1/conversations/{conv}")).await.json().await.unwrap();
    let answer = t.messages.last().unwrap();
    assert_eq!((answer.id.clone(), answer.status), (message_id(&live.events), MessageStatus::Streaming));
    assert_eq!(answer.start_seq, start_seq, "start_seq of the answer being written");

    assert!(stopped(&app, &token, &conv).await);
    live.until_end().await;
}

#[tokio::test]
async fn a_retried_send_replays_the_same_reply_without_a_new_turn() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
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
}

#[tokio::test]
async fn a_retry_right_after_sending_follows_only_that_reply() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
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
async fn a_second_message_while_a_reply_streams_is_refused() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
    app.fake.push(Reply::Endless { piece: "busy ".into(), every: Duration::from_millis(20) });
    let mut live = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "go on"})).await);
    live.until(|e| tokens(e) >= 1).await;
    let conv = conversation_id(&live.events);

    let r = app.send_raw(&token, json!({"agent": "plain", "conversation_id": conv, "message": "hello?"})).await;
    assert_eq!(failure(r).await, fail(409, "reply_in_progress"));
    assert_eq!(app.count("messages").await, 2, "the refused message was not stored");
    assert_eq!(app.fake.served(), 1);

    assert!(stopped(&app, &token, &conv).await);
    live.until_end().await;
    assert_eq!(shape(&live.events), ["message_start", "token*", "error:USER_ABORTED", "message_end:stopped"]);

    // Once stopped, the conversation takes messages again.
    app.fake.push_content("Back to you.");
    let events = app.send(&token, "plain", Some(&conv), "hello?").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Back to you.");
    assert_eq!(app.count("messages").await, 4);
}

#[tokio::test]
async fn earlier_messages_are_sent_to_the_model_as_history() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
    app.fake.push_content("Paris is the capital.");
    let first = app.send(&token, "plain", None, "What is the capital of France?").await;
    let conv = conversation_id(&first);
    app.fake.push_content("About two million.");
    let events = app.send(&token, "plain", Some(&conv), "And its population?").await;
    assert_eq!(text(&events), "About two million.");
    assert_eq!(conversation_id(&events), conv);

    let requests = app.fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1]["messages"],
        json!([
            {"role": "system", "content": "You are a test agent."},
            {"role": "user", "content": "What is the capital of France?"},
            {"role": "assistant", "content": "Paris is the capital."},
            {"role": "user", "content": "And its population?"},
        ])
    );
    // Numbering continues across turns (each visitor message is an event of its own, before the
    // answer's `message_start`).
    assert_eq!(first[0].0, 2);
    assert_eq!(events[0].0, first.last().unwrap().0 + 2);
    assert_eq!(seqs(&events), consecutive(events[0].0, events.len()));
}

#[tokio::test]
async fn a_restart_marks_the_streaming_answer_interrupted_and_ends_its_stream() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
    app.fake.push(Reply::Endless { piece: "part ".into(), every: Duration::from_millis(20) });
    let mut live = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "go"})).await);
    live.until(|e| tokens(e) >= 1).await;
    let conv = conversation_id(&live.events);
    let message = message_id(&live.events);

    // The writer stores the streamed tokens every ~50 ms; they are the partial text.
    let mut before = String::new();
    eventually(async || {
        let runs: Vec<String> =
            sqlx::query_scalar("SELECT data FROM events WHERE conversation_id = $1 AND name = 'token' ORDER BY seq")
                .bind(&conv)
                .fetch_all(app.db().pool())
                .await
                .unwrap();
        before = runs.iter().flat_map(|r| serde_json::from_str::<Vec<String>>(r).unwrap()).collect();
        !before.is_empty()
    })
    .await;

    let config = parley_server::Config::for_tests(app.database_url.clone(), app.dir.path().to_path_buf());
    let second = parley_server::spawn(config).await.expect("second server starts");

    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!((stored[1].id.as_str(), stored[1].status), (message.as_str(), MessageStatus::Interrupted));
    let kept = stored[1].content.clone();
    assert!(kept.starts_with(&before) && kept == "part ".repeat(kept.len() / 5), "partial text kept: {kept:?}");
    // An interrupted answer no longer changes.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let later = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!((later[1].status, later[1].content.as_str()), (MessageStatus::Interrupted, kept.as_str()));

    let mut replay = Live::new(follow(&app, &second.url(), &token, &conv, 0).await);
    replay.until_end().await;
    let events = replay.events;
    assert_eq!(events[0].0, 1);
    assert!(matches!(&events[0].1, StreamEvent::VisitorMessage(v) if v.text == "go"));
    assert!(matches!(&events[1].1, StreamEvent::MessageStart(m) if m.message_id == message));
    assert_eq!(shape(&events), ["visitor_message", "message_start", "token*", "message_end:interrupted"]);
    let (end_seq, end) = events.last().unwrap();
    assert_eq!(
        end,
        &StreamEvent::MessageEnd(MessageEnd { message_id: message.clone(), status: MessageStatus::Interrupted })
    );
    assert!(*end_seq >= 100_000, "numbering jumps past what the old process may have sent: {end_seq}");
    assert!(text(&events).starts_with(&kept));

    let r = app.client.get(format!("{}/api/v1/conversations/{conv}", second.url())).bearer_auth(&token).send().await;
    let t: Transcript = r.unwrap().json().await.unwrap();
    assert_eq!((t.messages[1].status, t.messages[1].text.as_str()), (MessageStatus::Interrupted, kept.as_str()));
}

#[tokio::test]
async fn a_retried_first_message_does_not_open_a_second_conversation() {
    let app = spawn_app().await;
    app.agent("plain", &[], None).await;
    let token = app.visitor("plain").await;
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
