//! The turn loop end to end: the real server, a fake OpenAI upstream over real HTTP, exact event
//! sequences and what was stored.

use std::time::Duration;

use crate::harness::*;
use parley_engine::engine::tools::ToolOutput;
use parley_engine::store::{messages, usage};
use parley_protocol::{MessageStatus, StreamEvent, ToolCallStatus};
use parley_server::fake_openai::Reply;
use serde_json::{Value, json};

#[tokio::test]
async fn no_tool_agent_makes_exactly_one_streaming_call() {
    let (app, token) = spawn_chat("plain", &["voice_calls"]).await; // a capability no shipped tool needs
    app.fake.push_content("Hello there, how can I help?");

    let events = app.send(&token, "plain", None, "hi").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Hello there, how can I help?");
    // Sequence numbers are consecutive; 1 is the visitor's message.
    let seqs: Vec<u64> = events.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, (2..=seqs.len() as u64 + 1).collect::<Vec<_>>());

    assert_eq!(app.fake.served(), 1);
    let request = &app.fake.requests()[0];
    assert_eq!(request["stream"], true);
    assert!(request.get("tools").is_none(), "no tools offered: {request}");
    assert_eq!(request["messages"][0]["role"], "system");
    assert_eq!(request["messages"][1], json!({"role": "user", "content": "hi"}));

    let conv = conversation_id(&events);
    let stored = app.assert_turn_stored(&conv, "hi", "Hello there, how can I help?").await;
    assert_eq!(stored[1].start_seq, 2);
    let ledger = usage::of_conversation(app.db(), &conv).await.unwrap();
    assert_eq!(ledger.len(), 1);
    assert_eq!((ledger[0].outcome.as_str(), ledger[0].output_tokens), ("ok", 6));
}

#[tokio::test]
async fn one_hop_tool_turn_streams_tool_events_and_a_block() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    app.fake.push_tool_call("escalate_to_human", json!({"reason": "billing question"}));
    app.fake.push_content("Press the button below.");

    let events = app.send(&token, "help", None, "I want a human").await;
    assert_eq!(shape(&events), [&ESCALATED[..], &["token*", "usage", "message_end:complete"]].concat());
    let started = tool_calls(&events, ToolCallStatus::Started)[0].clone();
    assert_eq!(started.arguments, json!({"reason": "billing question"}));
    assert_eq!(started.hop, 1);

    let requests = app.fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["tools"][0]["function"]["name"], "escalate_to_human");
    let second = requests[1]["messages"].as_array().unwrap();
    let tool_msg = second.last().unwrap();
    assert_eq!(tool_msg["role"], "tool");
    let result: Value = serde_json::from_str(tool_msg["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["ok"], true);
    assert_eq!(second[second.len() - 2]["tool_calls"][0]["function"]["name"], "escalate_to_human");

    let conv = conversation_id(&events);
    app.assert_escalation_stored(&conv, "Press the button below.").await;
    assert_eq!(usage::of_conversation(app.db(), &conv).await.unwrap().len(), 2);
}

#[tokio::test]
async fn tool_enabled_agent_without_tool_need_makes_one_call() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    app.fake.push_content("Our shop opens at nine.");
    let events = app.send(&token, "help", None, "When do you open?").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(app.fake.served(), 1, "no second completion for a turn that needs no tool");
    assert!(app.fake.requests()[0]["tools"].is_array(), "tools were offered");
}

/// The model ran out of tokens while writing a call's arguments: nothing is run, the answer
/// ends with what it said, and no further call is made.
#[tokio::test]
async fn a_tool_call_cut_short_by_the_token_limit_is_not_run() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    app.fake.push(Reply::CutToolCall {
        text: "Let me get someone for you.".into(),
        name: "escalate_to_human".into(),
        arguments: "{\"reason\": \"the customer wa".into(),
    });
    let events = app.send(&token, "help", None, "I want a human").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Let me get someone for you.");
    assert_eq!(app.fake.served(), 1, "no second call after a cut-short one");
    let conv = conversation_id(&events);
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls WHERE conversation_id = $1")
        .bind(&conv)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert_eq!(stored, 0, "nothing was run");
}

#[tokio::test]
async fn tool_loop_stops_after_three_hops() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    for _ in 0..4 {
        app.fake.push_tool_call("escalate_to_human", json!({}));
    }
    app.fake.push_content("Final answer.");
    let events = app.send(&token, "help", None, "loop please").await;
    let hops: Vec<u32> = tool_calls(&events, ToolCallStatus::Succeeded).iter().map(|t| t.hop).collect();
    assert_eq!(hops, [1, 2, 3]);
    let requests = app.fake.requests();
    assert_eq!(requests.len(), 4);
    assert!(requests[2]["tools"].is_array());
    assert!(requests[3].get("tools").is_none(), "the last call is made without tools");
    // The 4th call still answered with a tool call (the script): the hops are used up.
    assert_eq!(shape(&events).last().unwrap(), "message_end:failed");
    assert!(shape(&events).contains(&"error:MAX_TURNS_REACHED".to_owned()));
}

#[tokio::test]
async fn unknown_tool_and_invalid_arguments_become_tool_errors() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    app.fake.push_tool_call("launch_rockets", json!({}));
    app.fake.push_tool_call("escalate_to_human", json!({"reason": 42, "extra": true}));
    app.fake.push_content("Sorry about that.");

    let events = app.send(&token, "help", None, "do things").await;
    assert_eq!(
        shape(&events),
        [
            "message_start",
            "usage",
            "tool_call:launch_rockets:started",
            "tool_call:launch_rockets:failed",
            "usage",
            "tool_call:escalate_to_human:started",
            "tool_call:escalate_to_human:failed",
            "token*",
            "usage",
            "message_end:complete"
        ]
    );
    let errors: Vec<String> = tool_calls(&events, ToolCallStatus::Failed).into_iter().filter_map(|t| t.error).collect();
    assert!(errors[0].contains("unknown tool"), "{errors:?}");
    assert!(errors[1].contains("invalid arguments"), "{errors:?}");
    // The model saw both errors as tool results; no block was produced.
    let requests = app.fake.requests();
    let last = requests[2]["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(last["content"].as_str().unwrap().contains("invalid arguments"));
    assert!(!events.iter().any(|(_, e)| matches!(e, StreamEvent::Block(_))));
}

/// A tool that panics.
const PANICS: TestTool =
    TestTool { name: "explode", description: "panics", run: || Box::pin(async { panic!("boom") }) };

/// A tool that takes a minute.
const SLEEPS: TestTool = TestTool {
    name: "slow",
    description: "sleeps",
    run: || {
        Box::pin(async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(ToolOutput::default())
        })
    },
};

#[tokio::test]
async fn panicking_and_slow_tools_fail_without_taking_the_server_down() {
    let app = TestApp::builder().registry(registry_with(vec![PANICS, SLEEPS])).spawn().await;
    app.agent("t", &["testing"]).await;
    let token = app.visitor("t").await;
    app.fake.push(Reply::ToolCalls(vec![("explode".into(), "{}".into()), ("slow".into(), "{}".into())]));
    app.fake.push_content("Both failed.");
    let events = app.send(&token, "t", None, "go").await;
    let failures: Vec<(String, String)> =
        tool_calls(&events, ToolCallStatus::Failed).into_iter().map(|t| (t.name, t.error.unwrap())).collect();
    assert_eq!(failures.len(), 2);
    assert!(failures.iter().any(|(n, e)| n == "explode" && e.contains("crashed")));
    assert!(failures.iter().any(|(n, e)| n == "slow" && e.contains("too long")));
    assert_eq!(text(&events), "Both failed.");
    // The server still answers.
    app.fake.push_content("Still here.");
    let conv = conversation_id(&events);
    let again = app.send(&token, "t", Some(&conv), "again").await;
    assert_eq!(text(&again), "Still here.");
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_error(429, &[("retry-after-ms", "80")]);
    app.fake.push_content("Worth the wait.");
    let started = std::time::Instant::now();
    let events = app.send(&token, "plain", None, "hello").await;
    assert!(started.elapsed() >= Duration::from_millis(80), "waited for retry-after");
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(app.fake.served(), 2);
    assert_eq!(app.outcomes(&conversation_id(&events)).await, ["rate_limited", "ok"]);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_say_nothing_of_the_provider() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_error(401, &[]);
    let events = app.send(&token, "plain", None, "hello").await;
    assert_eq!(shape(&events), ["message_start", "error:UPSTREAM_REJECTED", "message_end:failed"]);
    assert_eq!(app.fake.served(), 1);
    let StreamEvent::Error(e) = &events[1].1 else { panic!() };
    assert!(!e.message.contains("401") && !e.message.contains("sk-") && !e.message.contains("fake"), "{e:?}");
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_error(503, &[]);
    app.fake.push_content("Recovered.");
    let events = app.send(&token, "plain", None, "hello").await;
    assert_eq!(text(&events), "Recovered.");
    assert_eq!(app.fake.served(), 2);
}

#[tokio::test]
async fn an_error_inside_a_200_stream_is_a_failure() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push(Reply::StreamError { pieces: vec!["Partial ".into()], message: "model overloaded at node 7".into() });
    let events = app.send(&token, "plain", None, "hello").await;
    assert_eq!(shape(&events), ["message_start", "token*", "error:UPSTREAM_UNAVAILABLE", "message_end:failed"]);
    let StreamEvent::Error(e) = &events[2].1 else { panic!() };
    assert!(!e.message.contains("node 7"), "provider details leaked: {e:?}");
    let stored = messages::list(app.db(), &conversation_id(&events)).await.unwrap();
    assert_eq!((stored[1].status, stored[1].content.as_str()), (MessageStatus::Failed, "Partial "));
    assert_eq!(app.outcomes(&conversation_id(&events)).await.last().unwrap(), "stream_error");
}

#[tokio::test]
async fn a_stream_without_finish_reason_is_a_failure() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push(Reply::Truncated(vec!["Cut ".into(), "off".into()]));
    let events = app.send(&token, "plain", None, "hello").await;
    assert_eq!(shape(&events), ["message_start", "token*", "error:UPSTREAM_UNAVAILABLE", "message_end:failed"]);
}

#[tokio::test]
async fn a_provider_that_ignores_streaming_and_tools_still_answers() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    app.fake.push(Reply::Json { content: "Plain JSON answer.".into() });
    let events = app.send(&token, "help", None, "hello").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Plain JSON answer.");
}

#[tokio::test]
async fn upstream_down_gives_a_friendly_error_and_keeps_the_visitor_message() {
    let app = spawn_app().await;
    let agent = app.agent("down", &[]).await;
    // Point the agent at a port where nothing listens.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    sqlx::query("UPDATE agents SET base_url = $1 WHERE id = $2")
        .bind(&dead)
        .bind(&agent.id)
        .execute(app.db().pool())
        .await
        .unwrap();
    let token = app.visitor("down").await;
    let events = app.send(&token, "down", None, "是否有人").await;
    assert_eq!(shape(&events), ["message_start", "error:UPSTREAM_UNAVAILABLE", "message_end:failed"]);
    let StreamEvent::Error(e) = &events[1].1 else { panic!() };
    assert!(e.message.contains("抱歉"), "answered in the visitor's language: {e:?}");
    let stored = messages::list(app.db(), &conversation_id(&events)).await.unwrap();
    assert_eq!(stored[0].content, "是否有人");
    assert_eq!(stored[1].status, MessageStatus::Failed);
}

/// A model that refuses `tools` (Ollama: "does not support tools") answers without them, and is
/// not offered tools again on the next turn.
#[tokio::test]
async fn a_model_that_refuses_tools_answers_without_them_and_is_remembered() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    let refusal = json!({"error": {"message": "registry.ollama.ai/library/gemma:2b does not support tools"}});
    app.fake.push(Reply::Status { status: 400, headers: vec![], body: refusal.to_string() });
    app.fake.push_content("Our shop opens at nine.");
    let events = app.send(&token, "help", None, "When do you open?").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Our shop opens at nine.");
    let requests = app.fake.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0]["tools"].is_array(), "tools were offered first");
    assert!(requests[1].get("tools").is_none(), "then the same request without them");

    app.fake.push_content("We close at six.");
    let conversation = conversation_id(&events);
    let events = app.send(&token, "help", Some(&conversation), "And when do you close?").await;
    assert_eq!(text(&events), "We close at six.");
    let requests = app.fake.requests();
    assert_eq!(requests.len(), 3, "no refused attempt the second time");
    assert!(requests[2].get("tools").is_none());

    // Any other refusal is not retried without tools.
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    app.fake.push(Reply::Status {
        status: 400,
        headers: vec![],
        body: json!({"error": {"message": "bad request"}}).to_string(),
    });
    let events = app.send(&token, "help", None, "hi").await;
    assert_eq!(shape(&events).last().unwrap(), "message_end:failed");
    assert_eq!(app.fake.requests().len(), 1);

    // A fallback model that does not take tools: found out once, then asked without them.
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    sqlx::query("UPDATE agents SET fallback_model = 'small-model' WHERE public_key = 'help'")
        .execute(app.db().writer())
        .await
        .unwrap();
    app.engine().agents_changed();
    app.fake.push(Reply::StreamError { pieces: vec![], message: "overloaded".into() });
    app.fake.push(Reply::Status { status: 400, headers: vec![], body: refusal.to_string() });
    app.fake.push_content("From the small model.");
    let events = app.send(&token, "help", None, "hi").await;
    assert_eq!(text(&events), "From the small model.");
    let asked = |r: &Value| (r["model"].as_str().unwrap().to_owned(), r.get("tools").is_some());
    let requests: Vec<(String, bool)> = app.fake.requests().iter().map(asked).collect();
    let expected = [("gpt-4o-mini", true), ("small-model", true), ("small-model", false)];
    assert_eq!(requests, expected.map(|(m, t)| (m.to_owned(), t)));
    app.fake.push(Reply::StreamError { pieces: vec![], message: "overloaded".into() });
    app.fake.push_content("Small again.");
    let conversation = conversation_id(&events);
    let events = app.send(&token, "help", Some(&conversation), "again").await;
    assert_eq!(text(&events), "Small again.");
    let requests: Vec<(String, bool)> = app.fake.requests().iter().map(asked).collect();
    assert_eq!(requests[3..], [("gpt-4o-mini".to_owned(), true), ("small-model".to_owned(), false)]);
}
