//! Spend is always bounded (issue 12, item 3), end to end against the fake upstream over real
//! HTTP: a model without a price row is charged the default price and trips a budget; a provider
//! that reports no usage is charged an estimate; every call asks for `max_tokens`; an answer that
//! trickles forever ends at the time limit and is still charged; the agent's daily cap is on by
//! default; a visitor's spend per day is capped across conversations; the console shows today's
//! spend and warns about unpriced models.

use std::time::Duration;

use crate::harness::fixtures::{self, ADMIN};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{agents as a, dashboard};
use parley_engine::engine::pricing::estimate_tokens;
use parley_engine::store::{messages, usage};
use parley_protocol::MessageStatus;
use parley_server::fake_openai::Reply;
use serde_json::{Value, json};

/// A model no price row matches (the seed prices `gpt-4o*`, `gpt-4.1*`, `claude-*` ones).
const UNPRICED: &str = "acme-large-2";

/// What one `Reply::text("one two three")` call of the fake costs: 12 tokens in, 3 out.
fn one_call(input_per_mtok: f64, output_per_mtok: f64) -> f64 {
    (12.0 * input_per_mtok + 3.0 * output_per_mtok) / 1_000_000.0
}

async fn agent_on(app: &TestApp, key: &str, model: &str) -> parley_engine::store::agents::Agent {
    app.insert_agent(fixtures::agent(key, fixtures::openai_provider(&app.fake)).model(model)).await
}

fn ended_by_budget(events: &Events) -> bool {
    shape(events).ends_with(&[
        "error:BUDGET_EXCEEDED".into(),
        "block:escalation_button".into(),
        "message_end:failed".into(),
    ])
}

#[tokio::test]
async fn an_unpriced_model_is_charged_the_default_price_and_hits_the_budget() {
    let app = spawn_app().await;
    let budget = 0.0003;
    // The same conversation on a priced model stays far inside the budget …
    let priced = agent_on(&app, "priced", "gpt-4o-mini").await;
    let unpriced = agent_on(&app, "unpriced", UNPRICED).await;
    for agent in [&priced, &unpriced] {
        app.set_limits(
            &agent.id,
            parley_engine::store::agents::AgentLimits { budget_usd: budget, ..Default::default() },
        )
        .await;
    }
    assert!(one_call(0.15, 0.60) < budget && one_call(15.0, 75.0) > budget, "the figures this test rests on");
    for key in ["priced", "unpriced"] {
        let token = app.visitor(key).await;
        app.fake.push_content("one two three");
        let first = app.send(&token, key, None, "hello").await;
        assert_eq!(shape(&first).last().unwrap(), "message_end:complete", "{key}: {:?}", shape(&first));
        let conv = conversation_id(&first);
        let ledger = usage::of_conversation(app.db(), &conv).await.unwrap();
        assert_eq!(ledger.len(), 1);
        app.fake.push_content("four five six");
        let second = app.send(&token, key, Some(&conv), "and more?").await;
        if key == "priced" {
            assert!((ledger[0].cost_usd - one_call(0.15, 0.60)).abs() < 1e-12, "{:?}", ledger[0]);
            assert_eq!(shape(&second).last().unwrap(), "message_end:complete");
        } else {
            // … and the unpriced one is charged the default US$15 / US$75 per million tokens.
            assert!((ledger[0].cost_usd - one_call(15.0, 75.0)).abs() < 1e-12, "{:?}", ledger[0]);
            assert!(ended_by_budget(&second), "{:?}", shape(&second));
        }
    }
    assert_eq!(app.fake.served(), 3, "the unpriced agent's second call was never made");
}

#[tokio::test]
async fn the_default_price_is_a_setting() {
    let app = TestApp::builder()
        .config(|c| {
            c.spend.unpriced_input_per_mtok = 1.0;
            c.spend.unpriced_output_per_mtok = 2.0;
        })
        .spawn()
        .await;
    agent_on(&app, "unpriced", UNPRICED).await;
    let token = app.visitor("unpriced").await;
    app.fake.push_content("one two three");
    let events = app.send(&token, "unpriced", None, "hello").await;
    let ledger = usage::of_conversation(app.db(), &conversation_id(&events)).await.unwrap();
    assert!((ledger[0].cost_usd - one_call(1.0, 2.0)).abs() < 1e-12, "{:?}", ledger[0]);
}

#[tokio::test]
async fn a_provider_without_usage_is_charged_an_estimate() {
    let (app, token) = spawn_chat("help", &[]).await;
    app.fake.push(Reply::WithoutUsage(Box::new(Reply::text("Our opening hours are nine to five, 优才计划 too."))));
    let events = app.send(&token, "help", None, "When are you open?").await;
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete");
    let ledger = usage::of_conversation(app.db(), &conversation_id(&events)).await.unwrap();
    let row = &ledger[0];
    assert!(row.estimated, "{row:?}");
    assert_eq!(row.output_tokens, estimate_tokens(&text(&events)));
    // The system prompt and the question at least.
    assert!(row.input_tokens >= estimate_tokens("You are a test agent.When are you open?"), "{row:?}");
    let expected = app.engine().prices().cost_usd("gpt-4o-mini", row.input_tokens, 0, row.output_tokens);
    assert!(row.cost_usd > 0.0 && (row.cost_usd - expected).abs() < 1e-12, "{row:?}");
    // The visitor's usage event says the same.
    let u = usages(&events);
    assert_eq!((u[0].input_tokens, u[0].output_tokens), (row.input_tokens, row.output_tokens));

    // A provider that does report usage is charged exactly that, not an estimate.
    app.fake.push_content("one two three");
    let again = app.send(&token, "help", Some(&conversation_id(&events)), "thanks").await;
    let ledger = usage::of_conversation(app.db(), &conversation_id(&again)).await.unwrap();
    assert!(!ledger[1].estimated && ledger[1].input_tokens == 12 && ledger[1].output_tokens == 3, "{:?}", ledger[1]);
}

#[tokio::test]
async fn every_model_call_asks_for_max_tokens() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    app.fake.push_tool_call("escalate_to_human", json!({"reason": "x"}));
    app.fake.push_content("done");
    app.send(&token, "help", None, "I need help").await;
    let asked: Vec<Value> = app.fake.requests().iter().map(|r| r["max_tokens"].clone()).collect();
    assert_eq!(asked, [json!(4096), json!(4096)], "the default (seed 003's 4,096) on both hops");

    let app = TestApp::builder().config(|c| c.spend.answer_max_tokens = 300).spawn().await;
    let agent = app.agent("help", &[]).await;
    let token = app.visitor("help").await;
    app.fake.push_content("ok");
    app.send(&token, "help", None, "hi").await;
    assert_eq!(app.fake.requests()[0]["max_tokens"], 300, "the server's default");

    // The agent's own setting beats the server's default.
    let limits = parley_engine::store::agents::AgentLimits { max_tokens: Some(777), ..Default::default() };
    app.set_limits(&agent.id, limits).await;
    app.fake.push_content("ok again");
    app.send(&token, "help", None, "hi again").await;
    assert_eq!(app.fake.requests()[1]["max_tokens"], 777, "the agent's max_tokens");
    let stored = parley_engine::store::agents::by_id(app.db(), &agent.id).await.unwrap().unwrap();
    assert_eq!(stored.limits.max_tokens, Some(777));
}

#[tokio::test]
async fn an_answer_that_trickles_forever_ends_at_the_time_limit_and_is_charged() {
    let app = TestApp::builder().config(|c| c.spend.answer_time_limit_secs = 1).spawn().await;
    app.agent("help", &[]).await;
    let token = app.visitor("help").await;
    // A token every 100 ms, well inside the 30 s idle timeout: only the time limit ends it.
    app.fake.push(Reply::Endless { piece: "tick ".into(), every: Duration::from_millis(100) });
    let started = std::time::Instant::now();
    let events = app.send(&token, "help", None, "hello").await;
    assert!(started.elapsed() < Duration::from_secs(10), "ended by the limit, not a timeout");
    assert!(
        shape(&events).ends_with(&[
            "error:TIME_LIMIT_REACHED".into(),
            "block:escalation_button".into(),
            "message_end:failed".into()
        ]),
        "{:?}",
        shape(&events)
    );
    let conv = conversation_id(&events);
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(stored[1].status, MessageStatus::Failed);
    assert!(stored[1].content.starts_with("tick tick"), "what came is kept: {}", stored[1].content);
    assert!(stored[1].content.contains("taking too long"), "{}", stored[1].content);
    // What was generated was paid for: an estimate, recorded as stopped.
    eventually(async || usage::of_conversation(app.db(), &conv).await.unwrap().len() == 1).await;
    let row = &usage::of_conversation(app.db(), &conv).await.unwrap()[0];
    assert_eq!(row.outcome, "stopped");
    assert!(row.estimated && row.output_tokens >= 5 && row.cost_usd > 0.0, "{row:?}");
    // And the upstream stream was closed.
    eventually(async || app.fake.open_streams() == 0).await;
    assert_eq!(app.fake.closed_early(), 1);
}

#[tokio::test]
async fn an_agents_daily_cap_is_on_by_default() {
    let app = TestApp::builder()
        .config(|c| {
            c.spend.agent_daily_cap_usd = 0.0003;
            c.spend.visitor_daily_cap_usd = 0.0;
        })
        .spawn()
        .await;
    // The agent sets no cap of its own.
    let agent = agent_on(&app, "unpriced", UNPRICED).await;
    assert_eq!(agent.limits.daily_cap_usd, None);
    let first = app.visitor("unpriced").await;
    app.fake.push_content("one two three");
    let events = app.send(&first, "unpriced", None, "hello").await;
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete");
    // Another visitor, another conversation: the agent's day is spent.
    let second = app.visitor("unpriced").await;
    app.fake.push_content("never asked for");
    let refused = app.send(&second, "unpriced", None, "hello").await;
    assert!(ended_by_budget(&refused), "{:?}", shape(&refused));
    assert_eq!(app.fake.served(), 1);
    // The call's cost lands with its ledger row (the shared totals on PostgreSQL).
    app.engine().flush().await;
    let now = {
        use parley_engine::engine::clock::{Clock, SystemClock};
        SystemClock.now_ms()
    };
    let spent = app.engine().budgets().spent_today(app.db(), &agent.id, now).await.unwrap();
    assert!((spent.unwrap() - one_call(15.0, 75.0)).abs() < 1e-12, "{spent:?}");
}

#[tokio::test]
async fn a_visitors_spend_per_day_is_capped_across_conversations() {
    let app = TestApp::builder().config(|c| c.spend.visitor_daily_cap_usd = 0.0003).spawn().await;
    agent_on(&app, "unpriced", UNPRICED).await;
    let greedy = app.visitor("unpriced").await;
    app.fake.push_content("one two three");
    let events = app.send(&greedy, "unpriced", None, "hello").await;
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete");
    // A new conversation does not bring a fresh allowance …
    app.fake.push_content("one two three");
    let refused = app.send(&greedy, "unpriced", None, "a new conversation").await;
    assert!(ended_by_budget(&refused), "{:?}", shape(&refused));
    assert_ne!(conversation_id(&refused), conversation_id(&events));
    assert_eq!(app.fake.served(), 1);
    // … while another visitor of the same agent is served.
    let other = app.visitor("unpriced").await;
    let served = app.send(&other, "unpriced", None, "hello").await;
    assert_eq!(shape(&served).last().unwrap(), "message_end:complete");
    assert_eq!(app.fake.served(), 2);
    // The ledger knows whose spend it was.
    let rows = usage::of_conversation(app.db(), &conversation_id(&events)).await.unwrap();
    assert!(rows[0].visitor_id.as_deref().is_some_and(|v| !v.is_empty()));
    let after = app.engine().now_ms() - 60_000;
    let visitor = usage::Spender::Visitor(rows[0].visitor_id.clone().unwrap());
    let spent = usage::spend_since(app.db(), &visitor, after).await.unwrap();
    assert!((spent - one_call(15.0, 75.0)).abs() < 1e-12);
}

/// Every visitor from one address shares its daily cap (issue 41, item 4): fresh visitor tokens
/// from the same address (an IPv6 one by its /64) are refused once it is spent, while visitors
/// from other addresses are served. The test trusts 127.0.0.1 as a proxy to name addresses.
#[tokio::test]
async fn an_addresses_spend_per_day_is_capped_across_its_visitors() {
    let app = TestApp::builder()
        .config(|c| {
            c.spend.address_daily_cap_usd = 0.0003;
            c.trusted_proxies = "127.0.0.1".into();
        })
        .spawn()
        .await;
    agent_on(&app, "unpriced", UNPRICED).await;
    let send_from = |token: String, ip: &'static str| {
        let request = app
            .client
            .post(app.url("/api/v1/chat"))
            .bearer_auth(token)
            .header("x-forwarded-for", ip)
            .json(&json!({"agent": "unpriced", "message": "hello"}));
        async move { read_events(request.send().await.unwrap()).await }
    };
    // (address, served): one call spends the cap (it costs more than 0.0003).
    let plan = [
        ("203.0.113.5", true),
        ("203.0.113.5", false),
        ("198.51.100.7", true),
        ("2001:db8:1:2::1", true),
        ("2001:db8:1:2::ffff", false),
        ("2001:db8:1:3::1", true),
    ];
    for (ip, served) in plan {
        app.fake.push_content("one two three");
        let events = send_from(app.visitor("unpriced").await, ip).await;
        if served {
            assert_eq!(shape(&events).last().unwrap(), "message_end:complete", "{ip}");
        } else {
            assert!(ended_by_budget(&events), "{ip}: {:?}", shape(&events));
        }
    }
    assert_eq!(app.fake.served(), 4);
    // The address's spend is in its day row (where a restart reads it back), nothing held.
    app.engine().flush().await;
    let today = app.engine().now_ms().div_euclid(parley_engine::engine::budget::DAY_MS);
    let row = parley_engine::store::spend::day(app.db(), "address:203.0.113.5", today).await.unwrap();
    let (spent, held) = row.expect("the address's day row");
    assert!((spent - one_call(15.0, 75.0)).abs() < 1e-12 && held.abs() < 1e-9, "{spent} {held}");
    let group = parley_engine::store::spend::day(app.db(), "address:2001:db8:1:2::/64", today).await.unwrap();
    assert!(group.is_some_and(|(spent, _)| spent > 0.0), "an IPv6 address counts by its /64: {group:?}");
}

#[tokio::test]
async fn the_console_shows_todays_spend_and_warns_about_unpriced_models() {
    let app = TestApp::builder().with_users(&[ADMIN]).config(|c| c.spend.agent_daily_cap_usd = 25.0).spawn().await;
    let priced = agent_on(&app, "priced", "gpt-4o-mini").await;
    let unpriced = agent_on(&app, "unpriced", UNPRICED).await;
    app.set_limits(
        &priced.id,
        parley_engine::store::agents::AgentLimits { daily_cap_usd: Some(3.0), ..Default::default() },
    )
    .await;
    let token = app.visitor("unpriced").await;
    app.fake.push_content("one two three");
    app.send(&token, "unpriced", None, "hello").await;

    let mut admin = app.signed_in(&ADMIN).await;
    let (status, body) = admin.call(dashboard::DashboardFigures::PATH, &[]).await;
    assert_eq!(status, 200, "{body}");
    let d: Value = serde_json::from_str(&body).unwrap();
    let row = |id: &str| d["spend_today"].as_array().unwrap().iter().find(|r| r["agent_id"] == id).unwrap().clone();
    let u = row(&unpriced.id);
    assert_eq!((u["unpriced"].as_bool(), u["cap_usd"].as_f64()), (Some(true), Some(25.0)), "the server's default cap");
    assert!((u["spent_usd"].as_f64().unwrap() - one_call(15.0, 75.0)).abs() < 1e-12, "{u}");
    let p = row(&priced.id);
    assert_eq!(
        (p["unpriced"].as_bool(), p["cap_usd"].as_f64(), p["spent_usd"].as_f64()),
        (Some(false), Some(3.0), Some(0.0))
    );
    assert_eq!(d["unpriced"]["input_per_mtok"], 15.0);

    // The agent list and the agent's form say it too, and the dashboard page shows it.
    let (_, list) = admin.call(a::Agents::PATH, &[]).await;
    let list: Value = serde_json::from_str(&list).unwrap();
    let flagged: Vec<&str> =
        list.as_array().unwrap().iter().filter(|a| a["unpriced"] == true).map(|a| a["key"].as_str().unwrap()).collect();
    assert_eq!(flagged, ["unpriced"]);
    let (_, editor) = admin.call(a::AgentEditor::PATH, &[("id", &unpriced.id)]).await;
    assert_eq!(serde_json::from_str::<Value>(&editor).unwrap()["model_priced"], false);
    let (status, page) = admin.page("/admin").await;
    assert_eq!(status, 200);
    assert!(page.contains("Spend today") && page.contains("has no row in the price table"), "{page}");
}

/// A burst at an agent's daily cap (issue 41, item 4): each call holds its worst case (its
/// input and all of its `max_tokens`), so fifty turns started together pass the cap by one
/// call's worst case at most. (With a hold of 1,000 tokens in and 200 out, about eleven of them
/// went ahead at once and spent four times the cap.)
#[tokio::test]
async fn fifty_turns_at_once_pass_a_daily_cap_by_one_call_at_most() {
    let app = TestApp::builder()
        .config(|c| {
            c.limits.no_limits = true;
            c.spend.visitor_daily_cap_usd = 0.0;
        })
        .spawn()
        .await;
    // gpt-4o: $2.50 a million tokens in, $10 out; 2,000 tokens out cost $0.02.
    let agent = agent_on(&app, "burst", "gpt-4o").await;
    let limits = parley_engine::store::agents::AgentLimits {
        daily_cap_usd: Some(0.05),
        max_tokens: Some(2_000),
        budget_usd: 1.0,
        ..Default::default()
    };
    app.set_limits(&agent.id, limits).await;
    let long = Reply::Content { pieces: (0..2_000).map(|i| format!("w{i} ")).collect(), delay: Duration::ZERO };
    for _ in 0..50 {
        app.fake.push(Reply::Delayed(Duration::from_millis(300), Box::new(long.clone())));
    }
    let mut visitors = Vec::new();
    for _ in 0..50 {
        visitors.push(app.visitor("burst").await);
    }
    let turns = visitors.iter().map(|v| app.send(v, "burst", None, "Tell me everything."));
    let ends = futures::future::join_all(turns).await;
    let complete = ends.iter().filter(|e| shape(e).last().is_some_and(|s| s == "message_end:complete")).count();
    let refused = ends.iter().filter(|e| ended_by_budget(e)).count();
    assert_eq!(complete + refused, 50, "each answered or refused by the cap");
    assert!(complete >= 2, "the cap's room was used: {complete}");
    app.engine().flush().await;
    let spent = app.engine().budgets().spent_today(app.db(), &agent.id, app.engine().now_ms()).await.unwrap();
    let spent = spent.unwrap_or_default();
    let one_call = (40.0 * 2.5 + 2_000.0 * 10.0) / 1_000_000.0;
    assert!(spent <= 0.05 + one_call, "spent {spent} of a 0.05 cap in {complete} answers");
}

/// A cap reached and an exhausted quota are told (issue 41, item 4): administrators get one
/// mail and the agent's endpoints one webhook event (`agent.cap_reached`,
/// `provider.quota_exhausted`) a day, however many calls are refused, and the dashboard lists
/// them.
#[tokio::test]
async fn a_cap_reached_and_an_exhausted_quota_are_told_once_a_day() {
    let app = TestApp::builder()
        .with_users(&[ADMIN])
        .config(|c| {
            c.spend.agent_daily_cap_usd = 0.0003;
            c.spend.visitor_daily_cap_usd = 0.0;
            c.allow_private_endpoints = true;
        })
        .spawn()
        .await;
    let capped = agent_on(&app, "capped", UNPRICED).await;
    let events = vec!["agent.cap_reached".to_owned(), "provider.quota_exhausted".to_owned()];
    app.engine().add_webhook(&capped.id, "http://127.0.0.1:9/hook", &events).await.unwrap();
    let visitor = app.visitor("capped").await;
    app.fake.push_content("one two three");
    assert_eq!(shape(&app.send(&visitor, "capped", None, "hello").await).last().unwrap(), "message_end:complete");
    for _ in 0..3 {
        let other = app.visitor("capped").await;
        assert!(ended_by_budget(&app.send(&other, "capped", None, "hello").await));
    }
    let count = |sql: &'static str, value: &'static str| {
        let db = app.db().clone();
        async move { sqlx::query_scalar::<_, i64>(sql).bind(value).fetch_one(db.pool()).await.unwrap() }
    };
    eventually(async || {
        count("SELECT COUNT(*) FROM webhook_deliveries WHERE event = $1", "agent.cap_reached").await == 1
    })
    .await;
    eventually(async || count("SELECT COUNT(*) FROM mail_outbox WHERE to_address = $1", ADMIN.email).await == 1).await;
    let subject: String = sqlx::query_scalar("SELECT subject FROM mail_outbox WHERE to_address = $1")
        .bind(ADMIN.email)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert!(subject.contains("spending cap"), "{subject}");

    // A provider that says the account's quota is gone: told once too.
    let broke = agent_on(&app, "broke", "gpt-4o-mini").await;
    app.engine().add_webhook(&broke.id, "http://127.0.0.1:9/hook", &events).await.unwrap();
    let quota = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    for _ in 0..2 {
        app.fake.push(Reply::Status { status: 429, headers: vec![], body: quota.into() });
        let v = app.visitor("broke").await;
        let ended = app.send(&v, "broke", None, "hello").await;
        assert_eq!(shape(&ended).last().unwrap(), "message_end:failed", "{:?}", shape(&ended));
    }
    eventually(async || {
        count("SELECT COUNT(*) FROM webhook_deliveries WHERE event = $1", "provider.quota_exhausted").await == 1
    })
    .await;
    eventually(async || count("SELECT COUNT(*) FROM mail_outbox WHERE to_address = $1", ADMIN.email).await == 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(count("SELECT COUNT(*) FROM alerts WHERE kind LIKE $1", "%").await, 2, "once each");

    let mut admin = app.signed_in(&ADMIN).await;
    let (status, body) = admin.call(dashboard::DashboardFigures::PATH, &[]).await;
    assert_eq!(status, 200, "{body}");
    let figures: Value = serde_json::from_str(&body).unwrap();
    let kinds: Vec<&str> = figures["alerts"].as_array().unwrap().iter().map(|a| a["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.len(), 2, "{body}");
    assert!(kinds.contains(&"agent.cap_reached") && kinds.contains(&"provider.quota_exhausted"), "{body}");
}
