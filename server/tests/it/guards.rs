//! The seed's termination table end to end (real server, fake upstream over real HTTP): budget
//! reached on the next call, two sends at a spending edge, tool hops used up, the visitor's stop
//! mid-stream and mid-tool, an overloaded model replaced by the fallback model, and the
//! consulting-state tag kept from the visitor however the stream splits it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::harness::*;
use parley_engine::engine::clock::Clock;
use parley_engine::engine::tools::ToolOutput;
use parley_engine::store::agents::AgentLimits;
use parley_engine::store::{conversations, messages, usage};
use parley_protocol::{Block, MessageStatus, StreamEvent};
use parley_server::fake_openai::Reply;
use serde_json::json;

pub(crate) fn error_codes(events: &Events) -> Vec<String> {
    events
        .iter()
        .filter_map(|(_, e)| if let StreamEvent::Error(e) = e { Some(e.code.to_string()) } else { None })
        .collect()
}

fn offers_a_person(events: &Events) -> bool {
    events.iter().any(|(_, e)| matches!(e, StreamEvent::Block(b) if matches!(b.block, Block::EscalationButton(_))))
}

#[tokio::test]
async fn budget_is_checked_before_every_call_and_the_next_call_is_refused() {
    let app = spawn_app().await;
    let agent = app.agent("help", &["ticket_escalation"]).await;
    // Less than one call costs: the first call may go (nothing spent yet), no second.
    app.set_limits(&agent.id, AgentLimits { budget_usd: 0.000_001, ..Default::default() }).await;
    let token = app.visitor("help").await;
    app.fake.push_tool_call("escalate_to_human", json!({"reason": "x"}));
    app.fake.push_content("never asked for");

    let events = app.send(&token, "help", None, "I need help").await;
    assert_eq!(
        shape(&events),
        [&ESCALATED[..], &["error:BUDGET_EXCEEDED", "block:escalation_button", "message_end:failed"]].concat()
    );
    assert_eq!(app.fake.served(), 1, "the second call was never made");
    let conv = conversation_id(&events);
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(stored[1].status, MessageStatus::Failed);
    assert!(stored[1].content.contains("limit for automatic answers"), "{}", stored[1].content);

    // The next message: refused before any call, in the visitor's language.
    let again = app.send(&token, "help", Some(&conv), "还有问题吗？").await;
    assert_eq!(
        shape(&again),
        ["message_start", "error:BUDGET_EXCEEDED", "block:escalation_button", "message_end:failed"]
    );
    let StreamEvent::Error(e) = &again.iter().find(|(_, e)| matches!(e, StreamEvent::Error(_))).unwrap().1 else {
        unreachable!()
    };
    assert!(e.message.contains("额度"), "{}", e.message);
    assert_eq!(app.fake.served(), 1);
    assert_eq!(usage::of_conversation(app.db(), &conv).await.unwrap().len(), 1);
}

#[tokio::test]
async fn two_sends_at_the_daily_cap_edge_only_one_goes_ahead() {
    let app = spawn_app().await;
    let agent = app.agent("plain", &[]).await;
    let cap = 0.01;
    app.set_limits(&agent.id, AgentLimits { daily_cap_usd: Some(cap), ..Default::default() }).await;
    // Today the agent has spent all but a sliver of its cap.
    spent_earlier(app.db(), &agent.id, cap - 0.000_000_1, parley_engine::engine::clock::SystemClock.now_ms()).await;
    let (alice, bob) = (app.visitor("plain").await, app.visitor("plain").await);
    for _ in 0..2 {
        app.fake.push(Reply::Delayed(Duration::from_millis(300), Box::new(Reply::text("Slow answer."))));
    }
    let (a, b) = tokio::join!(app.send(&alice, "plain", None, "one"), app.send(&bob, "plain", None, "two"));
    let mut outcomes = [error_codes(&a), error_codes(&b)];
    outcomes.sort();
    assert_eq!(outcomes, [vec![], vec!["BUDGET_EXCEEDED".to_owned()]]);
    assert_eq!(app.fake.served(), 1, "only one call went upstream");
    assert!(offers_a_person(if error_codes(&a).is_empty() { &b } else { &a }));

    // The call that went ahead spent past the cap: nobody gets another.
    let c = app.send(&app.visitor("plain").await, "plain", None, "three").await;
    assert_eq!(error_codes(&c), ["BUDGET_EXCEEDED"]);
    assert_eq!(app.fake.served(), 1);
}

#[tokio::test]
async fn tool_hops_used_up_end_with_max_turns_reached() {
    let app = spawn_app().await;
    let agent = app.agent("help", &["ticket_escalation"]).await;
    app.set_limits(&agent.id, AgentLimits { max_turns: Some(2), ..Default::default() }).await;
    let token = app.visitor("help").await;
    for _ in 0..3 {
        app.fake.push_tool_call("escalate_to_human", json!({}));
    }
    let events = app.send(&token, "help", None, "loop please").await;
    let requests = app.fake.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1]["tools"].is_array());
    assert!(requests[2].get("tools").is_none(), "after two hops the answer is asked for without tools");
    assert_eq!(error_codes(&events), ["MAX_TURNS_REACHED"]);
    assert_eq!(shape(&events).last().unwrap(), "message_end:failed");
    assert!(offers_a_person(&events));
    let stored = messages::list(app.db(), &conversation_id(&events)).await.unwrap();
    assert!(stored[1].content.contains("more steps"), "{}", stored[1].content);
}

/// Counts how many runs of the tool were dropped before they finished.
static DROPPED: AtomicUsize = AtomicUsize::new(0);
static STARTED: AtomicUsize = AtomicUsize::new(0);

struct CountDrop;
impl Drop for CountDrop {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// A tool that takes a minute, and counts its runs and how many were dropped.
const FOREVER: TestTool = TestTool {
    name: "slow_lookup",
    description: "takes a minute",
    run: || {
        Box::pin(async {
            let _guard = CountDrop;
            STARTED.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(ToolOutput::default())
        })
    },
};

#[tokio::test]
async fn the_visitors_stop_cancels_a_running_tool_within_a_second() {
    let app = TestApp::builder().registry(registry_with(vec![FOREVER])).spawn().await;
    app.agent("t", &["testing"]).await;
    let token = app.visitor("t").await;
    app.fake.push(Reply::ToolCalls(vec![("slow_lookup".into(), "{}".into())]));
    let mut live = Live::unchecked(app.send_raw(&token, json!({"agent": "t", "message": "look it up"})).await);
    live.until(|e| shape(e).iter().any(|s| s.ends_with(":started"))).await;
    eventually(async || STARTED.load(Ordering::SeqCst) == 1).await;
    let conv = conversation_id(&live.events);
    let stopped_at = std::time::Instant::now();
    assert_eq!(app.stop(&token, &conv).await.status(), 200);
    live.until_end().await;
    let events = live.events;
    tokio::time::timeout(Duration::from_secs(1), eventually(async || DROPPED.load(Ordering::SeqCst) == 1))
        .await
        .expect("the tool was cancelled within 1 s of the stop");
    assert!(stopped_at.elapsed() < Duration::from_secs(2));
    assert_eq!(error_codes(&events), ["USER_ABORTED"]);
    assert_eq!(shape(&events).last().unwrap(), "message_end:stopped");
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(stored[1].status, MessageStatus::Stopped);
    assert_eq!(app.fake.served(), 1, "no call after the stop");
}

#[tokio::test]
async fn an_overloaded_model_is_replaced_by_the_fallback_model() {
    let app = spawn_app().await;
    let mut agent = app.agent("plain", &[]).await;
    agent.provider.fallback_model = Some("gpt-4o-mini-fallback".into());
    sqlx::query("UPDATE agents SET fallback_model = 'gpt-4o-mini-fallback' WHERE id = $1")
        .bind(&agent.id)
        .execute(app.db().writer())
        .await
        .unwrap();
    let token = app.visitor("plain").await;
    // The first attempt and both retries: overloaded.
    for _ in 0..3 {
        app.fake.push_error(529, &[]);
    }
    app.fake.push_content("Answer from the fallback.");
    let events = app.send(&token, "plain", None, "hello").await;
    assert_eq!(text(&events), "Answer from the fallback.");
    let requests = app.fake.requests();
    let models: Vec<&str> = requests.iter().map(|r| r["model"].as_str().unwrap()).collect();
    assert_eq!(models, ["gpt-4o-mini", "gpt-4o-mini", "gpt-4o-mini", "gpt-4o-mini-fallback"]);
    assert_eq!(usages(&events)[0].model, "gpt-4o-mini-fallback");
    app.engine().flush().await;
    let ledger = usage::of_conversation(app.db(), &conversation_id(&events)).await.unwrap();
    let mut rows: Vec<(&str, &str)> = ledger.iter().map(|r| (r.model.as_str(), r.outcome.as_str())).collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            ("gpt-4o-mini", "server_error"),
            ("gpt-4o-mini", "server_error"),
            ("gpt-4o-mini", "server_error"),
            ("gpt-4o-mini-fallback", "ok")
        ]
    );
}

/// An agent that names no fallback model gets its provider's default (`PARLEY_FALLBACK_MODELS`);
/// its own choice, when it has one, wins.
#[tokio::test]
async fn an_agent_without_a_fallback_uses_its_providers_default() {
    let app =
        TestApp::builder().config(|c| c.fallback_models = "openai=provider-default-fallback".into()).spawn().await;
    let agent = app.agent("plain", &[]).await;
    let token = app.visitor("plain").await;
    app.fake.push(Reply::StreamError { pieces: vec![], message: "overloaded_error".into() });
    app.fake.push_content("Answer from the default fallback.");
    let events = app.send(&token, "plain", None, "hello").await;
    assert_eq!(text(&events), "Answer from the default fallback.");
    let models: Vec<String> = app.fake.requests().iter().map(|r| r["model"].as_str().unwrap().to_owned()).collect();
    assert_eq!(models, ["gpt-4o-mini", "provider-default-fallback"]);

    sqlx::query("UPDATE agents SET fallback_model = 'agent-own-fallback' WHERE id = $1")
        .bind(&agent.id)
        .execute(app.db().writer())
        .await
        .unwrap();
    app.engine().agents_changed();
    app.fake.push(Reply::StreamError { pieces: vec![], message: "overloaded_error".into() });
    app.fake.push_content("Answer from the agent's own fallback.");
    let conversation = conversation_id(&events);
    let events = app.send(&token, "plain", Some(&conversation), "again").await;
    assert_eq!(text(&events), "Answer from the agent's own fallback.");
    assert_eq!(app.fake.requests().last().unwrap()["model"], "agent-own-fallback");
}

/// Overloaded said inside a 200 stream before any text (Anthropic's usual `overloaded_error`),
/// and rate limits that outlast the retries: the fallback model answers; the failed attempts
/// are in the ledger at no cost.
#[tokio::test]
async fn overloaded_inside_the_stream_or_still_rate_limited_goes_to_the_fallback_model() {
    let app = spawn_app().await;
    let agent = app.agent("plain", &[]).await;
    sqlx::query("UPDATE agents SET fallback_model = 'gpt-4o-mini-fallback' WHERE id = $1")
        .bind(&agent.id)
        .execute(app.db().writer())
        .await
        .unwrap();
    let token = app.visitor("plain").await;
    app.fake.push(Reply::StreamError { pieces: vec![], message: "Overloaded".into() });
    app.fake.push_content("Answer from the fallback.");
    let events = app.send(&token, "plain", None, "hello").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Answer from the fallback.");
    let models: Vec<String> = app.fake.requests().iter().map(|r| r["model"].as_str().unwrap().to_owned()).collect();
    assert_eq!(models, ["gpt-4o-mini", "gpt-4o-mini-fallback"]);
    app.engine().flush().await;
    let ledger = usage::of_conversation(app.db(), &conversation_id(&events)).await.unwrap();
    let mut rows: Vec<(&str, &str, f64)> =
        ledger.iter().map(|r| (r.model.as_str(), r.outcome.as_str(), r.cost_usd)).collect();
    rows.sort_by(|a, b| a.0.cmp(b.0));
    assert_eq!(rows[0], ("gpt-4o-mini", "stream_error", 0.0));
    assert_eq!((rows[1].0, rows[1].1), ("gpt-4o-mini-fallback", "ok"));

    // Once text was written, an error is the answer's end: no second model writes over it.
    app.fake.push(Reply::StreamError { pieces: vec!["Half an ".into()], message: "overloaded".into() });
    let conversation = conversation_id(&events);
    let events = app.send(&token, "plain", Some(&conversation), "again").await;
    assert_eq!(shape(&events).last().unwrap(), "message_end:failed");
    assert_eq!(app.fake.requests().len(), 3);

    // Rate limited on every retry: the fallback model too.
    for _ in 0..3 {
        app.fake.push_error(429, &[("retry-after", "0")]);
    }
    app.fake.push_content("Fallback again.");
    let events = app.send(&token, "plain", Some(&conversation), "once more").await;
    assert_eq!(text(&events), "Fallback again.");
    assert_eq!(app.fake.requests().last().unwrap()["model"], "gpt-4o-mini-fallback");
}

#[tokio::test]
async fn the_consulting_state_tag_never_reaches_the_visitor() {
    let (app, token) = spawn_chat("plain", &[]).await;
    let pieces = [
        "您好！请问您的",
        "年龄是？\n\n<consul",
        "ting_sta",
        "te>{\"stage\":\"info_collection\",",
        "\"collected\":{\"education\":\"master\"}}</consulting",
        "_state>",
    ];
    app.fake.push(Reply::Content { pieces: pieces.iter().map(|s| s.to_string()).collect(), delay: Duration::ZERO });
    let events = app.send(&token, "plain", None, "我想了解优才计划").await;
    for (_, e) in &events {
        if let StreamEvent::Token(t) = e {
            assert!(!t.text.contains('<') && !t.text.contains("stage"), "token {:?} shows the tag", t.text);
        }
    }
    assert_eq!(text(&events).trim_end(), "您好！请问您的年龄是？");
    let state = events.iter().find_map(|(_, e)| if let StreamEvent::StateUpdate(s) = e { Some(s) } else { None });
    let expected = json!({"stage": "info_collection", "collected": {"education": "master"}});
    assert_eq!(state.expect("a state_update event").state, expected);
    let conv = conversation_id(&events);
    assert_eq!(conversations::consulting_state(app.db(), &conv).await.unwrap(), Some(expected));
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(stored[1].content, text(&events), "stored as seen");
}
