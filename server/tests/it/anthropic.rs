//! The native Anthropic Messages provider end to end: the real server, a fake Anthropic upstream
//! over real HTTP (which checks request shapes like the real API), exact event sequences, what
//! was stored and what was sent upstream.

use std::time::Duration;

use crate::harness::*;
use parley_engine::store::{messages, usage};
use parley_protocol::{MessageStatus, StreamEvent, ToolCallStatus};
use parley_server::fake_anthropic::Reply;
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4-20250514";

/// The server and the fake Anthropic upstream, an agent "bot" on it, a visitor's token.
async fn setup(capabilities: &[&str]) -> (TestApp, String) {
    let app = TestApp::builder().anthropic().spawn().await;
    app.anthropic_agent("bot", capabilities).await;
    let token = app.visitor("bot").await;
    (app, token)
}

/// The message before `i` alternates with it, for every message of a request.
fn assert_alternates(request: &Value) {
    let roles: Vec<&str> =
        request["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert!(roles.windows(2).all(|w| w[0] != w[1]), "roles alternate: {roles:?}");
}

#[tokio::test]
async fn plain_turn_streams_text_and_records_anthropic_usage() {
    let (app, token) = setup(&["voice_calls"]).await; // a capability no shipped tool needs
    let fake = app.anthropic();
    fake.set_usage(12, 30);
    fake.push_text("Hello from Claude, how can I help?");

    let events = app.send(&token, "bot", None, "hi").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Hello from Claude, how can I help?");
    let tokens = tokens(&events);
    assert!(tokens >= 7, "streamed piece by piece, got {tokens} tokens");
    let usage_event = usages(&events)[0];
    assert_eq!(usage_event.model, MODEL);
    // Cache reads count as input, and as its cached part.
    assert_eq!((usage_event.input_tokens, usage_event.output_tokens, usage_event.cached_tokens), (42, 7, 30));

    assert_eq!(fake.served(), 1);
    let recorded = fake.recorded();
    let request = &recorded[0].body;
    assert_eq!(request["model"], MODEL);
    assert_eq!(request["stream"], true);
    assert!(request["max_tokens"].as_u64().is_some_and(|n| n > 0), "{request}");
    assert!(request.get("tools").is_none(), "no tools offered: {request}");
    assert_eq!(request["system"][0]["type"], "text");
    assert!(request["system"][0]["text"].as_str().unwrap().contains("You are a test agent."));
    assert_eq!(request["system"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(request["messages"], json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]));
    let headers = &recorded[0].headers;
    assert_eq!(headers.get("x-api-key").map(String::as_str), Some("sk-ant-test-secret"));
    assert_eq!(headers.get("anthropic-version").map(String::as_str), Some("2023-06-01"));
    assert_eq!(headers.get("content-type").map(String::as_str), Some("application/json"));
    assert!(!headers.contains_key("authorization"), "the key goes in x-api-key only: {headers:?}");

    let conv = conversation_id(&events);
    app.assert_turn_stored(&conv, "hi", "Hello from Claude, how can I help?").await;
    let ledger = usage::of_conversation(app.db(), &conv).await.unwrap();
    assert_eq!(ledger.len(), 1);
    let row = &ledger[0];
    assert_eq!((row.provider.as_str(), row.model.as_str(), row.outcome.as_str()), ("anthropic", MODEL, "ok"));
    assert_eq!((row.input_tokens, row.output_tokens, row.cached_tokens), (42, 7, 30));
}

#[tokio::test]
async fn tool_use_runs_the_tool_and_sends_its_result_back() {
    let (app, token) = setup(&["ticket_escalation"]).await;
    let fake = app.anthropic();
    fake.push_tool_use("escalate_to_human", json!({"reason": "billing question"}));
    fake.push_text("Press the button below.");

    let events = app.send(&token, "bot", None, "I want a human").await;
    assert_eq!(shape(&events), [&ESCALATED[..], &["token*", "usage", "message_end:complete"]].concat());
    let started = tool_calls(&events, ToolCallStatus::Started)[0].clone();
    // The input arrived in several `input_json_delta` pieces.
    assert_eq!(started.arguments, json!({"reason": "billing question"}));
    assert_eq!(started.hop, 1);
    assert_eq!(text(&events), "Press the button below.");

    let recorded = fake.recorded();
    assert_eq!(recorded.len(), 2);
    for r in &recorded {
        assert_eq!(r.headers.get("x-api-key").map(String::as_str), Some("sk-ant-test-secret"));
        assert_eq!(r.body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert_alternates(&r.body);
    }
    let tool = &recorded[0].body["tools"][0];
    assert_eq!(tool["name"], "escalate_to_human");
    assert_eq!(tool["input_schema"]["type"], "object");
    assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));

    let second = recorded[1].body["messages"].as_array().unwrap();
    let assistant = &second[second.len() - 2];
    assert_eq!(assistant["role"], "assistant");
    let tool_use = assistant["content"].as_array().unwrap().iter().find(|b| b["type"] == "tool_use").unwrap();
    assert_eq!(tool_use["name"], "escalate_to_human");
    assert_eq!(tool_use["input"], json!({"reason": "billing question"}));
    let id = tool_use["id"].as_str().unwrap();
    let last = second.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], id);
    let result: Value = serde_json::from_str(last["content"][0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["ok"], true);

    let conv = conversation_id(&events);
    app.assert_escalation_stored(&conv, "Press the button below.").await;
    let ledger = usage::of_conversation(app.db(), &conv).await.unwrap();
    assert_eq!(ledger.len(), 2);
    assert!(ledger.iter().all(|r| r.provider == "anthropic" && r.outcome == "ok"), "{ledger:?}");
}

#[tokio::test]
async fn text_before_a_tool_use_is_kept_in_the_assistant_turn() {
    let (app, token) = setup(&["ticket_escalation"]).await;
    let fake = app.anthropic();
    fake.push(Reply::ToolUse {
        text: Some("Let me get someone.".into()),
        calls: vec![("escalate_to_human".into(), json!({"reason": "asked"}).to_string())],
    });
    fake.push_text(" Done.");
    let events = app.send(&token, "bot", None, "a person please").await;
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete");
    assert_eq!(text(&events), "Let me get someone. Done.");
    let second = fake.requests()[1]["messages"].as_array().unwrap().clone();
    let assistant = &second[second.len() - 2]["content"];
    assert_eq!(assistant[0], json!({"type": "text", "text": "Let me get someone."}));
    assert_eq!(assistant[1]["type"], "tool_use");
}

#[tokio::test]
async fn the_last_hop_without_tools_still_carries_earlier_tool_calls() {
    let (app, token) = setup(&["ticket_escalation"]).await;
    let fake = app.anthropic();
    for _ in 0..3 {
        fake.push_tool_use("escalate_to_human", json!({}));
    }
    fake.push_text("Final answer.");
    let events = app.send(&token, "bot", None, "loop please").await;
    let requests = fake.requests();
    assert_eq!(requests.len(), 4);
    let last = &requests[3];
    assert!(last.get("tools").is_none(), "the last call is made without tools");
    // The fake, like the API, refuses tool blocks without tools: they went as text.
    let serialized = last["messages"].to_string();
    assert!(!serialized.contains("tool_use") && !serialized.contains("tool_result"), "{serialized}");
    assert!(serialized.contains("escalate_to_human"), "{serialized}");
    assert_alternates(last);
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete", "{:?}", shape(&events));
    assert_eq!(text(&events), "Final answer.");
    assert!(!events.iter().any(|(_, e)| matches!(e, StreamEvent::Error(_))), "{events:?}");
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    let (app, token) = setup(&[]).await;
    let fake = app.anthropic();
    fake.push_error(429, &[("retry-after", "1")]);
    fake.push_text("Worth the wait.");
    let started = std::time::Instant::now();
    let events = app.send(&token, "bot", None, "hello").await;
    assert!(started.elapsed() >= Duration::from_secs(1), "waited for retry-after");
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Worth the wait.");
    assert_eq!(fake.served(), 2);
    assert_eq!(app.outcomes(&conversation_id(&events)).await, ["rate_limited", "ok"]);
}

#[tokio::test]
async fn overloaded_529_is_retried() {
    let (app, token) = setup(&[]).await;
    let fake = app.anthropic();
    fake.push_error(529, &[]);
    fake.push_text("Recovered.");
    let events = app.send(&token, "bot", None, "hello").await;
    assert_eq!(text(&events), "Recovered.");
    assert_eq!(fake.served(), 2);
    assert_eq!(app.outcomes(&conversation_id(&events)).await, ["server_error", "ok"]);
}

#[tokio::test]
async fn auth_error_is_not_retried_and_says_nothing_of_the_provider() {
    let (app, token) = setup(&[]).await;
    let fake = app.anthropic();
    fake.push_error(401, &[]);
    fake.push_text("Never sent.");
    let events = app.send(&token, "bot", None, "hello").await;
    assert_eq!(shape(&events), ["message_start", "error:UPSTREAM_REJECTED", "message_end:failed"]);
    assert_eq!(fake.served(), 1, "no retry");
    let StreamEvent::Error(e) = &events[1].1 else { panic!() };
    // What the visitor reads: the error's code and message (ids are random and may hold digits).
    let everything = format!("{} {}", e.code, e.message).to_lowercase();
    for leak in ["401", "sk-ant", "authentication", "x-api-key", "fake", "anthropic", "claude"] {
        assert!(!everything.contains(leak), "`{leak}` leaked to the visitor: {e:?}");
    }
    let conv = conversation_id(&events);
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(stored[1].status, MessageStatus::Failed);
    assert!(!stored[1].content.to_lowercase().contains("authentication"), "{:?}", stored[1].content);
    let ledger = usage::of_conversation(app.db(), &conv).await.unwrap();
    let outcomes: Vec<(&str, &str)> = ledger.iter().map(|u| (u.provider.as_str(), u.outcome.as_str())).collect();
    assert_eq!(outcomes, [("anthropic", "auth_error")]);
}

#[tokio::test]
async fn an_overloaded_error_inside_the_stream_is_a_failure() {
    let (app, token) = setup(&[]).await;
    let fake = app.anthropic();
    fake.push(Reply::StreamError {
        pieces: vec!["Partial ".into()],
        error_type: "overloaded_error".into(),
        message: "Overloaded at node 7".into(),
    });
    let events = app.send(&token, "bot", None, "hello").await;
    assert_eq!(shape(&events), ["message_start", "token*", "error:UPSTREAM_UNAVAILABLE", "message_end:failed"]);
    let StreamEvent::Error(e) = &events[2].1 else { panic!() };
    assert!(!e.message.contains("node 7"), "provider details leaked: {e:?}");
    assert_eq!(fake.served(), 1, "no retry once the answer has started");
    let conv = conversation_id(&events);
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!((stored[1].status, stored[1].content.trim_end()), (MessageStatus::Failed, "Partial"));
    assert_eq!(app.outcomes(&conv).await.last().unwrap(), "stream_error");
}

#[tokio::test]
async fn a_stream_without_message_stop_is_a_failure() {
    let (app, token) = setup(&[]).await;
    let fake = app.anthropic();
    fake.push(Reply::Truncated(vec!["Cut ".into(), "off".into()]));
    let events = app.send(&token, "bot", None, "hello").await;
    assert_eq!(shape(&events), ["message_start", "token*", "error:UPSTREAM_UNAVAILABLE", "message_end:failed"]);
    assert_eq!(app.outcomes(&conversation_id(&events)).await.last().unwrap(), "truncated");
}

#[tokio::test]
async fn earlier_turns_are_sent_as_alternating_messages() {
    let (app, token) = setup(&[]).await;
    let fake = app.anthropic();
    fake.push_text("First answer.");
    let events = app.send(&token, "bot", None, "one").await;
    let conv = conversation_id(&events);
    fake.push_text("Second answer.");
    let again = app.send(&token, "bot", Some(&conv), "two").await;
    assert_eq!(text(&again), "Second answer.");
    let second = &fake.requests()[1];
    assert_alternates(second);
    assert_eq!(
        second["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "one"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]},
            {"role": "user", "content": [{"type": "text", "text": "two"}]},
        ])
    );
}
