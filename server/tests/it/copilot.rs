//! The operator's copilot (issue 43, part 7) over real HTTP against the fake upstream, on SQLite
//! and PostgreSQL: a hand-over writes a summary from the transcript and the lead (never from a
//! private note), stored and shown; a suggested reply is drafted from the knowledge base with its
//! sources and sent to nobody; the operator's draft is improved, shortened, translated; bad input
//! and conversations an operator may not see change nothing; every call is charged to the
//! conversation and the agent's day and refused past the budget or the cap; the demo model does
//! each offline and says so.

use std::time::Duration;

use leptos::server_fn::ServerFn;
use parley_app::console::api::{conversations as c, copilot as cp, inbox as i};
use parley_engine::store::agents::{AgentLimits, ProviderConfig, ProviderKind};
use parley_engine::store::{copilot, messages, usage};
use parley_server::fake_openai::Reply;
use serde_json::{Value, json};

use crate::harness::fixtures::{self, ADMIN, OSCAR};
use crate::harness::*;

/// A visitor of `agent` who asked for a refund and left their details: `(conversation, token)`.
async fn handed_over(app: &TestApp, agent: &str) -> (String, String) {
    let visitor = app.visitor(agent).await;
    app.fake.push_content("I am sorry to hear that.");
    let events = app.send(&visitor, agent, None, "My parcel 42 arrived broken, I want a refund").await;
    let conv = conversation_id(&events);
    let r = app
        .post(
            &visitor,
            &format!("/api/v1/conversations/{conv}/lead"),
            json!({"name": "Ann", "email": "ann@example.com", "message": "call after 5"}),
        )
        .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    (conv, visitor)
}

/// The stored summary, once the background call has written it (10 s at most).
async fn summary_written(app: &TestApp, conv: &str) -> copilot::HandoffSummary {
    for _ in 0..200 {
        if let Some(s) = copilot::summary(app.db(), conv).await.unwrap() {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no summary was written for {conv}");
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body}"))
}

/// The user message of a copilot request (its task line and data).
fn task_of(request: &Value) -> String {
    request["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Ledger rows of the conversation without a message: the copilot's.
async fn copilot_rows(app: &TestApp, conv: &str) -> Vec<usage::UsageRecord> {
    usage::of_conversation(app.db(), conv).await.unwrap().into_iter().filter(|u| u.message_id.is_none()).collect()
}

#[tokio::test]
async fn a_handoff_writes_a_summary_from_the_transcript_and_the_lead_never_from_a_note() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    app.agent("help", &[]).await;
    app.fake.push_copilot(Reply::text("- Ann wants a refund for parcel 42."));
    let (conv, _) = handed_over(&app, "help").await;
    let summary = summary_written(&app, &conv).await;
    assert_eq!((summary.text.as_str(), summary.model.as_str()), ("- Ann wants a refund for parcel 42.", "gpt-4o-mini"));
    let asked = app.fake.copilot_requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let task = task_of(&asked[0]);
    assert!(task.starts_with("Copilot task: summary\n"), "{task}");
    assert!(task.contains("parcel 42 arrived broken") && task.contains("call after 5"), "{task}");
    assert!(asked[0]["tools"].as_array().is_none_or(|t| t.is_empty()), "no tools are offered");
    // Charged to the conversation (no message, no visitor), as one call.
    let rows = copilot_rows(&app, &conv).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].cost_usd > 0.0 && rows[0].outcome == "ok", "{rows:?}");
    // Nothing reached the visitor's transcript.
    assert_eq!(messages::list(app.db(), &conv).await.unwrap().len(), 2);

    let mut admin = app.signed_in(&ADMIN).await;
    let (status, body) = admin.call(c::Conversation::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["summary"]["text"], "- Ann wants a refund for parcel 42.");
    // A private note is never part of what the copilot sends.
    let (status, body) =
        admin.call(i::AddNote::PATH, &[("id", &conv), ("body", "Secret: she is a VIP, waive the fee")]).await;
    assert_eq!(status, 200, "{body}");
    app.fake.push_copilot(Reply::text("- Written again."));
    let (status, body) = admin.call(cp::CopilotSummary::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["text"], "- Written again.");
    assert_eq!(copilot::summary(app.db(), &conv).await.unwrap().unwrap().text, "- Written again.");
    let asked = app.fake.copilot_requests();
    assert_eq!(asked.len(), 2);
    assert!(!asked[1].to_string().contains("VIP"), "a note reached the model: {}", asked[1]);
    // Claiming it needs no new summary: nothing was said since.
    let (status, body) = admin.call(c::Claim::PATH, &[("id", &conv)]).await;
    assert_eq!((status, body.as_str()), (200, "true"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(app.fake.copilot_requests().len(), 2);
}

#[tokio::test]
async fn a_suggested_reply_comes_from_the_knowledge_with_its_sources_and_is_sent_to_nobody() {
    use parley_engine::engine::clock::{Clock, SystemClock};
    use parley_engine::store::knowledge::{self, NewArticle};
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("kb", &["knowledge_search"]).await;
    let now = SystemClock.now_ms();
    let fields = knowledge::BaseFields { name: "Shop", ..Default::default() };
    let base = knowledge::create_base(app.db(), &agent.id, &fields, now).await.unwrap();
    let article = NewArticle {
        title: "Refunds".into(),
        category: None,
        kind: "article".into(),
        body: "Refunds are paid within 5 working days. Keep the original box for the courier.".into(),
        source_url: Some("https://shop.example/refunds".into()),
    };
    app.engine().services().knowledge.add_articles(&base.id, &[article], now).await.unwrap();
    let visitor = app.visitor("kb").await;
    app.fake.push_content("Let me check.");
    let conv = conversation_id(&app.send(&visitor, "kb", None, "How long does a refund take?").await);

    let mut admin = app.signed_in(&ADMIN).await;
    app.fake.push_copilot(Reply::text("Refunds are paid within 5 working days [1]."));
    let (status, body) = admin.call(cp::CopilotSuggest::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    let draft = json_of(&body);
    assert_eq!(draft["text"], "Refunds are paid within 5 working days [1].");
    assert_eq!(draft["citations"], json!([["Refunds", "https://shop.example/refunds"]]));
    assert_eq!(draft["note"], Value::Null, "a real model's draft has no demo note");
    let task = task_of(&app.fake.copilot_requests()[0]);
    assert!(task.starts_with("Copilot task: suggest\n"), "{task}");
    assert!(
        task.contains("How long does a refund take?") && task.contains("Refunds are paid within 5 working days"),
        "{task}"
    );
    // A draft is only a draft: the visitor's transcript and stream have nothing new.
    assert_eq!(messages::list(app.db(), &conv).await.unwrap().len(), 2);
    assert_eq!(copilot_rows(&app, &conv).await.len(), 1);
}

#[tokio::test]
async fn drafts_are_rewritten_and_bad_input_or_an_unseen_conversation_changes_nothing() {
    let app = TestApp::builder().with_users(&[ADMIN, OSCAR]).spawn().await;
    app.agent("help", &[]).await;
    app.agent("other", &[]).await;
    let visitor = app.visitor("help").await;
    app.fake.push_content("Bonjour !");
    let conv = conversation_id(&app.send(&visitor, "help", None, "Bonjour, où est ma commande ?").await);
    let mut admin = app.signed_in(&ADMIN).await;
    for (how, reply) in [
        ("improve", "Your order ships today."),
        ("shorten", "Ships today."),
        ("translate", "Votre commande part aujourd'hui."),
    ] {
        app.fake.push_copilot(Reply::text(reply));
        let (status, body) = admin
            .call(cp::CopilotRewrite::PATH, &[("id", &conv), ("draft", "your order  ships today"), ("how", how)])
            .await;
        assert_eq!(status, 200, "{how}: {body}");
        assert_eq!(json_of(&body)["text"], reply, "{how}");
        let task = task_of(app.fake.copilot_requests().last().unwrap());
        assert!(task.starts_with(&format!("Copilot task: {how}\n")), "{task}");
        let data: Value = serde_json::from_str(task.split_once('\n').unwrap().1).unwrap();
        assert_eq!(data["draft"], "your order  ships today");
        assert_eq!(data["visitor_messages"], json!(["Bonjour, où est ma commande ?"]));
    }
    assert_eq!(copilot_rows(&app, &conv).await.len(), 3);

    // Refused, and nothing reaches the model or the ledger.
    let asked = app.fake.copilot_requests().len();
    let (status, body) =
        admin.call(cp::CopilotRewrite::PATH, &[("id", &conv), ("draft", "   "), ("how", "improve")]).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("write a draft first"), "{body}");
    let (status, body) =
        admin.call(cp::CopilotRewrite::PATH, &[("id", &conv), ("draft", "hi"), ("how", "explode")]).await;
    assert_eq!(status, 422, "{body}");
    let long = "x".repeat(4_001);
    let (status, _) =
        admin.call(cp::CopilotRewrite::PATH, &[("id", &conv), ("draft", &long), ("how", "shorten")]).await;
    assert_eq!(status, 422);
    let (status, _) = admin.call(cp::CopilotSuggest::PATH, &[("id", "no-such-conversation")]).await;
    assert_eq!(status, 404);
    // Oscar is in a team that handles only the other agent: this conversation is not his to see.
    let oscar = parley_engine::store::users::with_hash(app.db(), OSCAR.email).await.unwrap().unwrap().0.id;
    let (status, body) = admin
        .call(
            i::SaveTeam::PATH,
            &[
                ("name", "Other"),
                ("mode", "manual"),
                ("members", &oscar),
                ("agents", &app_agent_id(&app, "other").await),
            ],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let mut oscar = app.signed_in(&OSCAR).await;
    for (path, form) in [
        (cp::CopilotSuggest::PATH, vec![("id", conv.as_str())]),
        (cp::CopilotSummary::PATH, vec![("id", conv.as_str())]),
        (cp::CopilotRewrite::PATH, vec![("id", conv.as_str()), ("draft", "hello"), ("how", "improve")]),
    ] {
        let (status, body) = oscar.call(path, &form).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    assert_eq!(app.fake.copilot_requests().len(), asked);
    assert_eq!(copilot_rows(&app, &conv).await.len(), 3);
}

async fn app_agent_id(app: &TestApp, key: &str) -> String {
    parley_engine::store::agents::by_public_key(app.db(), key).await.unwrap().unwrap().id
}

#[tokio::test]
async fn copilot_calls_are_charged_to_the_agents_budget_and_refused_past_it() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("help", &[]).await;
    let visitor = app.visitor("help").await;
    app.fake.push_content("Hello.");
    let conv = conversation_id(&app.send(&visitor, "help", None, "Hi, a question about my order").await);
    let mut admin = app.signed_in(&ADMIN).await;
    let rewrite = [("id", conv.as_str()), ("draft", "it ships today"), ("how", "improve")];
    let (status, body) = admin.call(cp::CopilotRewrite::PATH, &rewrite).await;
    assert_eq!(status, 200, "{body}");
    let cost = json_of(&body)["cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0, "{body}");
    // The copilot's cost is the conversation's: the turn's and the copilot's calls add up.
    let ledger = usage::of_conversation(app.db(), &conv).await.unwrap();
    let total: f64 = ledger.iter().map(|u| u.cost_usd).sum();
    assert!((usage::conversation_cost(app.db(), &conv).await.unwrap() - total).abs() < 1e-12);
    assert!(ledger.iter().any(|u| u.message_id.is_none() && (u.cost_usd - cost).abs() < 1e-12), "{ledger:?}");

    // The conversation's budget is spent: refused before any call.
    let asked = app.fake.copilot_requests().len();
    app.set_limits(&agent.id, AgentLimits { budget_usd: total, ..Default::default() }).await;
    let (status, body) = admin.call(cp::CopilotRewrite::PATH, &rewrite).await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("budget"), "{body}");
    let (status, body) = admin.call(cp::CopilotSuggest::PATH, &[("id", conv.as_str())]).await;
    assert_eq!(status, 409, "{body}");
    // The agent's daily cap is reached (its day counts the copilot's calls): refused too.
    app.set_limits(&agent.id, AgentLimits { budget_usd: 10.0, daily_cap_usd: Some(total / 2.0), ..Default::default() })
        .await;
    let (status, body) = admin.call(cp::CopilotRewrite::PATH, &rewrite).await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("daily cap"), "{body}");
    assert_eq!(app.fake.copilot_requests().len(), asked, "a refused call reached the model");
    assert_eq!(usage::of_conversation(app.db(), &conv).await.unwrap().len(), ledger.len());
}

#[tokio::test]
async fn the_demo_model_helps_offline_and_says_what_it_did() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let demo = ProviderConfig {
        kind: ProviderKind::Demo,
        base_url: None,
        api_key: None,
        model: "demo".into(),
        fallback_model: None,
    };
    app.insert_agent(fixtures::agent("offline", demo)).await;
    let visitor = app.visitor("offline").await;
    let conv = conversation_id(&app.send(&visitor, "offline", None, "hello, my parcel is late").await);
    let mut admin = app.signed_in(&ADMIN).await;
    let (status, body) = admin
        .call(
            cp::CopilotRewrite::PATH,
            &[("id", &conv), ("draft", "sorry   for the delay. it ships today"), ("how", "improve")],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let draft = json_of(&body);
    assert_eq!(draft["text"], "Sorry for the delay. It ships today.");
    assert!(draft["note"].as_str().unwrap().starts_with("Offline demo model"), "{body}");
    let (status, body) = admin.call(cp::CopilotSummary::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    let summary = json_of(&body);
    assert_eq!(summary["model"], "demo");
    assert!(summary["text"].as_str().unwrap().contains("\"hello, my parcel is late\""), "{body}");
    assert!(summary["note"].as_str().unwrap().contains("offline demo model"), "{body}");
    assert!(app.fake.copilot_requests().is_empty(), "the demo needs no upstream");
}
