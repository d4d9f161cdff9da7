//! Answer tests (issue 45, part 2) through the console's server functions over real HTTP, the
//! fake OpenAI upstream and the `parley test-agent` command: each case runs the real turn (a tool
//! against real knowledge, a sandbox payment although the server takes none) in a trial that
//! leaves no conversation, reaches no webhook, mail or operator, and costs what it costs; a case
//! that must cite a source the knowledge lacks fails; a run on the draft uses the draft; the run
//! page compares with the run before; a run can be cancelled; bad cases change nothing.

use std::time::Duration;

use crate::harness::fixtures::{ADMIN, OPERATOR};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{answer_tests as t, conversations as c, versions as v, webhooks as w};
use parley_app::console::types::{AgentForm, CaseForm, CheckForm, TestOutcome, TestRunItem, TestRunView, TestsView};
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::store::knowledge::{self, NewArticle};
use serde_json::{Value, json};

fn check(kind: &str, value: &str) -> CheckForm {
    CheckForm { kind: kind.into(), value: value.into(), model: String::new() }
}

fn case(name: &str, turns: &[&str], checks: Vec<CheckForm>) -> CaseForm {
    CaseForm { id: None, name: name.into(), turns: turns.iter().map(|t| (*t).to_owned()).collect(), checks }
}

async fn save(b: &mut Browser, agent: &str, case: &CaseForm) -> TestOutcome {
    let (status, body) = b.call_json(t::SaveAnswerTest::PATH, json!({ "id": agent, "case": case })).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

async fn start(b: &mut Browser, agent: &str, target: &str) -> String {
    let (status, body) = b.call(t::RunAnswerTests::PATH, &[("id", agent), ("target", target)]).await;
    assert_eq!(status, 200, "{body}");
    let o: TestOutcome = serde_json::from_str(&body).unwrap();
    assert!(o.ok, "{body}");
    o.run_id.expect("a run id")
}

/// Polls the runs until `run` has ended (30 s at most).
async fn finished(b: &mut Browser, agent: &str, run: &str) -> TestRunItem {
    for _ in 0..300 {
        let (status, body) = b.call(t::AnswerTestRuns::PATH, &[("id", agent)]).await;
        assert_eq!(status, 200, "{body}");
        let runs: Vec<TestRunItem> = serde_json::from_str(&body).unwrap();
        let r = runs.into_iter().find(|r| r.id == run).expect("the run is listed");
        if !r.is_active() {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the run did not end in 30 s");
}

async fn run_view(b: &mut Browser, agent: &str, run: &str) -> TestRunView {
    let (status, body) = b.call(t::AnswerTestRun::PATH, &[("id", agent), ("run_id", run)]).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// The upstream's replies for the four cases below, in the order the run asks for them; the
/// refund answer is `refund`.
fn script(app: &TestApp, refund: &str) {
    app.fake.push_tool_call("search_knowledge", json!({"query": "refund"}));
    app.fake.push_content(refund);
    app.fake.push_tool_call("search_knowledge", json!({"query": "warranty guarantee"}));
    app.fake.push_content("I could not find anything about a warranty.");
    app.fake.push_content("Hello! How can I help?");
    app.fake.push_tool_call(
        "generate_payment",
        json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY"}),
    );
    app.fake.push_content("Please scan the code to pay.");
    app.fake.push_tool_call("escalate_to_human", json!({"reason": "asked for a person"}));
    app.fake.push_content("A person can take over: press the button.");
}

/// Rows of `table` (a quick look at what a trial left).
async fn rows(app: &TestApp, table: &str) -> i64 {
    app.count(table).await
}

#[tokio::test]
async fn cases_run_the_real_turn_in_a_trial_that_reaches_no_one_and_runs_compare() {
    let app =
        TestApp::builder().with_users(&[ADMIN, OPERATOR]).config(|c| c.allow_private_endpoints = true).spawn().await;
    let receiver = Receiver::start().await;
    let agent = app.agent("shop", &["knowledge_search", "ticket_escalation", "payments"]).await;
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
    let mut b = app.signed_in(&ADMIN).await;
    let every_event = parley_engine::store::webhooks::EVENTS.join(",");
    let (status, body) = b
        .call(
            w::AddWebhook::PATH,
            &[("agent_id", &agent.id), ("url", &receiver.url("/hook")), ("events", &every_event)],
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // Bad cases: each wrong field said, nothing stored.
    let bad = CaseForm {
        checks: vec![check("calls_tool", "teleport"), check("max_cost", "a lot"), check("judge", "polite")],
        ..case(" ", &["  "], vec![])
    };
    let refused = save(&mut b, &agent.id, &bad).await;
    assert!(!refused.ok && refused.errors.iter().any(|e| e.field == "checks"), "{refused:?}");
    let bad = case(" ", &["  "], vec![check("calls_tool", "teleport"), check("judge", "polite")]);
    let refused = save(&mut b, &agent.id, &bad).await;
    let fields: Vec<&str> = refused.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["name", "turns", "checks", "checks"], "{refused:?}");
    assert_eq!(rows(&app, "answer_tests").await, 0);
    // Operators do not manage tests.
    let mut operator = app.signed_in(&OPERATOR).await;
    let (status, _) = operator.call(t::AnswerTests::PATH, &[("id", &agent.id)]).await;
    assert_eq!(status, 403);

    let cases = [
        case(
            "Refund time",
            &["How long does a refund take?"],
            vec![
                check("calls_tool", "search_knowledge"),
                check("cites", "Refunds"),
                check("contains", "5 working days"),
                check("no_hand_over", ""),
                check("max_cost", "1"),
            ],
        ),
        // The knowledge has no warranty article: the case must fail.
        case("Warranty", &["Is there a warranty?"], vec![check("cites", "Warranty policy")]),
        case(
            "Pay",
            &["Hi", "I want to pay for an assessment"],
            vec![check("calls_tool", "generate_payment"), check("not_contains", "error")],
        ),
        case("A person", &["I want to talk to a person"], vec![check("hands_over", "")]),
    ];
    for c in &cases {
        assert!(save(&mut b, &agent.id, c).await.ok);
    }

    script(&app, "Refunds are paid within 5 working days [1].");
    let calls_before = app.fake.requests().len();
    let first = start(&mut b, &agent.id, "published").await;
    // One run at a time.
    let (_, body) = b.call(t::RunAnswerTests::PATH, &[("id", &agent.id), ("target", "published")]).await;
    let busy: TestOutcome = serde_json::from_str(&body).unwrap();
    assert!(!busy.ok && busy.message.contains("still going"), "{body}");
    let done = finished(&mut b, &agent.id, &first).await;
    assert_eq!((done.status.as_str(), done.done, done.passed, done.total), ("done", 4, 3, 4), "{done:?}");
    assert!(done.cost_usd > 0.0, "the model calls cost what they cost");
    assert_eq!(app.fake.requests().len() - calls_before, 9, "every turn and hop reached the upstream");

    let view = run_view(&mut b, &agent.id, &first).await;
    assert!(view.previous.is_none());
    let by_name = |name: &str| view.cases.iter().find(|c| c.name == name).unwrap().now.clone().unwrap();
    let refund = by_name("Refund time");
    assert!(refund.passed, "{refund:?}");
    assert!(refund.sources.iter().any(|s| s.contains("Refunds") && s.contains("shop.example/refunds")), "{refund:?}");
    assert!(refund.tools[0].starts_with("search_knowledge("), "{refund:?}");
    let warranty = by_name("Warranty");
    assert!(!warranty.passed && !warranty.checks[0].passed, "{warranty:?}");
    assert_eq!(warranty.checks[0].detail, "no source was cited");
    let pay = by_name("Pay");
    assert!(pay.passed, "payments in the sandbox although the server takes none: {pay:?}");
    assert!(by_name("A person").handed_over);

    // The trials left nothing but their cost, and told no one.
    tokio::time::sleep(Duration::from_millis(500)).await;
    app.engine().flush().await;
    for table in [
        "conversations",
        "messages",
        "visitors",
        "orders",
        "leads",
        "webhook_deliveries",
        "mail_outbox",
        "operator_notifications",
    ] {
        assert_eq!(rows(&app, table).await, 0, "{table}");
    }
    assert!(rows(&app, "usage_ledger").await >= 9);
    assert!(receiver.received().is_empty(), "no webhook call");

    // A draft with other instructions: the run on the draft sends them; the visitors' agent does not.
    let form = AgentForm {
        system_prompt: "You are a test agent.\nAlways mention the courier.".into(),
        model: agent.provider.model.clone(),
        capabilities: agent.capabilities.clone(),
        ..AgentForm::default()
    };
    let (_, body) = b.call_json(v::SaveAgentDraft::PATH, json!({ "id": agent.id, "form": form })).await;
    assert!(body.contains("\"ok\":true"), "{body}");
    script(&app, "Refunds take a while; keep the box for the courier.");
    let second = start(&mut b, &agent.id, "draft").await;
    let done = finished(&mut b, &agent.id, &second).await;
    assert_eq!((done.target.as_str(), done.passed, done.total), ("draft", 2, 4), "{done:?}");
    let systems: Vec<String> = app.fake.requests()[calls_before + 9..]
        .iter()
        .map(|r| r["messages"][0]["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(systems.iter().all(|s| s.contains("Always mention the courier.")), "{systems:?}");

    // The run page: the refund case turned red, the failing check and the answer's change marked.
    let view = run_view(&mut b, &agent.id, &second).await;
    assert_eq!(view.previous.as_ref().map(|p| p.id.as_str()), Some(first.as_str()));
    let refund = view.cases.iter().find(|c| c.name == "Refund time").unwrap();
    assert_eq!(refund.turned.as_deref(), Some("passed before, fails now"));
    let contains = refund.now.as_ref().unwrap().checks.iter().find(|c| c.label.starts_with("contains")).unwrap();
    assert_eq!((contains.passed, contains.was), (false, Some(true)));
    assert!(refund.answer_diff.iter().any(|l| l.kind == "added" && l.text.contains("courier")), "{refund:?}");
    assert!(refund.answer_diff.iter().any(|l| l.kind == "removed" && l.text.contains("5 working days")));
    let same = view.cases.iter().find(|c| c.name == "Warranty").unwrap();
    assert!(same.turned.is_none() && same.answer_diff.is_empty());

    // The page lists the cases and runs, newest first.
    let (_, body) = b.call(t::AnswerTests::PATH, &[("id", &agent.id)]).await;
    let page: TestsView = serde_json::from_str(&body).unwrap();
    assert_eq!((page.cases.len(), page.has_draft), (4, true));
    assert_eq!(page.runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [second.as_str(), first.as_str()]);
    assert!(page.tools.iter().any(|t| t == "search_knowledge") && page.judge_prompt.contains("PASS or FAIL"));
    assert!(receiver.received().is_empty(), "no webhook call");
}

#[tokio::test]
async fn a_run_can_be_cancelled_and_trial_conversations_stay_out_of_lists_and_webhooks() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("slow", &[]).await;
    let mut b = app.signed_in(&ADMIN).await;
    for name in ["one", "two", "three"] {
        assert!(save(&mut b, &agent.id, &case(name, &["Hello"], vec![check("contains", "word")])).await.ok);
    }
    app.fake.push(fixtures::slow_words(20, 100));
    let run = start(&mut b, &agent.id, "published").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, body) = b.call(t::CancelAnswerTests::PATH, &[("id", &agent.id), ("run_id", &run)]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"ok\":true"), "{body}");
    let done = finished(&mut b, &agent.id, &run).await;
    assert_eq!((done.status.as_str(), done.done), ("cancelled", 1), "the case under way ended, no other ran: {done:?}");
    let (_, body) = b.call(t::CancelAnswerTests::PATH, &[("id", &agent.id), ("run_id", &run)]).await;
    assert!(body.contains("already ended"), "{body}");
    assert_eq!(rows(&app, "conversations").await, 0);

    // A trial conversation (as a run holds one while it runs) is in no list, search or webhook.
    let token = app.visitor("slow").await;
    app.fake.push_content("A word of welcome.");
    let real = conversation_id(&app.send(&token, "slow", None, "Hello there").await);
    app.engine().flush().await;
    let visitor: String = sqlx::query_scalar("SELECT visitor_id FROM conversations WHERE id = $1")
        .bind(&real)
        .fetch_one(app.db().writer())
        .await
        .unwrap();
    let now = SystemClock.now_ms();
    sqlx::query(
        "INSERT INTO conversations (id, agent_id, visitor_id, status, lead_submitted, created_at, updated_at, trial) \
         VALUES ('trial-1', $1, $2, 'waiting_human', 0, $3, $3, 1)",
    )
    .bind(&agent.id)
    .bind(&visitor)
    .bind(now)
    .execute(app.db().writer())
    .await
    .unwrap();
    let (status, body) = b.call(c::Conversations::PATH, &[("page", "1")]).await;
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    let ids: Vec<&str> = listed["items"].as_array().unwrap().iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, [real.as_str()], "{body}");
    let mut tx = app.db().writer().begin().await.unwrap();
    let event = "conversation.waiting_human";
    let sent = parley_engine::store::webhooks::emit(&mut tx, &agent.id, event, Some("trial-1"), json!({}), now).await;
    tx.commit().await.unwrap();
    assert_eq!(sent.unwrap(), 0);
    assert_eq!(rows(&app, "webhook_deliveries").await, 0);
}

#[tokio::test]
async fn the_test_agent_command_runs_the_set_and_fails_when_a_case_fails() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("cli-tests", &[]).await;
    let mut b = app.signed_in(&ADMIN).await;
    assert!(save(&mut b, &agent.id, &case("Greets", &["Hello"], vec![check("contains", "welcome")])).await.ok);
    assert!(save(&mut b, &agent.id, &case("Short", &["Hi"], vec![check("not_contains", "welcome")])).await.ok);
    let run = |draft: bool| {
        let mut args = vec!["test-agent", "--agent", "cli-tests"];
        if draft {
            args.push("--draft");
        }
        tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
            .args(args)
            .env("DATABASE_URL", &app.database_url)
            .env("PARLEY_DATA_DIR", app.dir.path())
            .env("PARLEY_PRIVATE_ENDPOINTS", app.fake.addr.to_string())
            .env("RUST_LOG", "off")
            .output()
    };
    app.fake.push_content("A warm welcome!");
    app.fake.push_content("Hello.");
    let out = run(false).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("PASS Greets") && stdout.contains("2 of 2 passed on version 1"), "{stdout}");

    app.fake.push_content("Hello.");
    app.fake.push_content("Hello.");
    let out = run(false).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("FAIL Greets") && stdout.contains("✗ contains “welcome” — not in the answer"), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of 2 cases failed"));

    // No draft: said, nothing run.
    let out = run(true).await.unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no draft"), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(rows(&app, "conversations").await, 0);
}

async fn preview(b: &mut Browser, agent: &str, target: &str, conversation: &str, text: &str) -> (u16, String) {
    let args = [("id", agent), ("target", target), ("conversation", conversation), ("text", text)];
    b.call(t::PreviewAgent::PATH, &args).await
}

#[tokio::test]
async fn the_preview_talks_to_the_draft_in_one_trial_conversation_and_start_over_deletes_it() {
    use parley_app::console::types::PreviewReply;
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("try", &[]).await;
    let mut b = app.signed_in(&ADMIN).await;
    let (status, body) = preview(&mut b, &agent.id, "draft", "", "Hello").await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("no draft"), "{body}");

    let form = AgentForm {
        system_prompt: "You are a test agent.\nSpeak like a pirate.".into(),
        model: agent.provider.model.clone(),
        ..AgentForm::default()
    };
    let (_, body) = b.call_json(v::SaveAgentDraft::PATH, json!({ "id": agent.id, "form": form })).await;
    assert!(body.contains("\"ok\":true"), "{body}");
    app.fake.push_content("Ahoy!");
    let (status, body) = preview(&mut b, &agent.id, "draft", "", "Hello").await;
    assert_eq!(status, 200, "{body}");
    let first: PreviewReply = serde_json::from_str(&body).unwrap();
    assert_eq!((first.answer.as_str(), first.status.as_str()), ("Ahoy!", "complete"));
    let last = app.fake.requests().last().cloned().unwrap();
    assert!(last["messages"][0]["content"].as_str().unwrap().contains("pirate"), "{last}");

    // The next message goes to the same conversation: the model sees the first exchange.
    app.fake.push_content("Arr, five days.");
    let (status, body) = preview(&mut b, &agent.id, "draft", &first.conversation_id, "Refund?").await;
    assert_eq!(status, 200, "{body}");
    let second: PreviewReply = serde_json::from_str(&body).unwrap();
    assert_eq!(second.conversation_id, first.conversation_id);
    let last = app.fake.requests().last().cloned().unwrap().to_string();
    assert!(last.contains("Ahoy!") && last.contains("Hello") && last.contains("Refund?"), "{last}");
    assert!(second.cost_usd > first.cost_usd, "the cost so far");

    // It is in no list; a visitor's conversation is not a preview and cannot be written to here.
    let token = app.visitor("try").await;
    app.fake.push_content("Welcome.");
    let real = conversation_id(&app.send(&token, "try", None, "Hi").await);
    let (_, body) = b.call(c::Conversations::PATH, &[("page", "1")]).await;
    let listed: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(listed["total"], json!(1), "{body}");
    let (status, body) = preview(&mut b, &agent.id, "published", &real, "Hijack").await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("no such preview"), "{body}");
    let (status, _) = b.call(t::EndAgentPreview::PATH, &[("id", &agent.id), ("conversation", &real)]).await;
    assert_eq!(status, 422);

    // Start over: the trial goes; the visitor's conversation stays.
    let (status, body) =
        b.call(t::EndAgentPreview::PATH, &[("id", &agent.id), ("conversation", &first.conversation_id)]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(rows(&app, "conversations").await, 1);

    // A preview left open: the sweep deletes it after an hour, and only it.
    app.fake.push_content("Ahoy again!");
    let (_, body) = preview(&mut b, &agent.id, "published", "", "Hello").await;
    let open: PreviewReply = serde_json::from_str(&body).unwrap();
    assert_eq!(app.engine().delete_idle_trials().await.unwrap(), 0, "not idle yet");
    let hours_ago = SystemClock.now_ms() - 2 * 3_600_000;
    sqlx::query("UPDATE conversations SET updated_at = $2 WHERE id = $1")
        .bind(&open.conversation_id)
        .bind(hours_ago)
        .execute(app.db().writer())
        .await
        .unwrap();
    assert_eq!(app.engine().delete_idle_trials().await.unwrap(), 1);
    let left: Vec<String> =
        sqlx::query_scalar("SELECT id FROM conversations").fetch_all(app.db().writer()).await.unwrap();
    assert_eq!(left, [real]);
}

#[tokio::test]
async fn a_judge_check_asks_the_named_model_with_the_visible_prompt_and_counts_its_cost() {
    use parley_engine::engine::answer_tests::JUDGE_PROMPT;
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("judged", &[]).await;
    let mut b = app.signed_in(&ADMIN).await;
    let judge =
        CheckForm { kind: "judge".into(), value: "Greets the visitor politely".into(), model: "grader-1".into() };
    assert!(save(&mut b, &agent.id, &case("Polite", &["Hello"], vec![judge.clone()])).await.ok);
    assert!(save(&mut b, &agent.id, &case("Rude", &["Hi"], vec![judge])).await.ok);
    app.fake.push_content("Good morning, how may I help you?");
    app.fake.push_content("PASS\nIt greets the visitor and offers help.");
    app.fake.push_content("What.");
    app.fake.push_content("FAIL\nNo greeting.");
    let run = start(&mut b, &agent.id, "published").await;
    let done = finished(&mut b, &agent.id, &run).await;
    assert_eq!((done.passed, done.total), (1, 2), "{done:?}");
    let requests = app.fake.requests();
    let graded = &requests[1];
    assert_eq!(graded["model"], json!("grader-1"));
    assert_eq!(graded["messages"][0]["content"], json!(JUDGE_PROMPT));
    let asked = graded["messages"][1]["content"].as_str().unwrap();
    assert!(asked.contains("Criterion: Greets the visitor politely") && asked.contains("Visitor: Hello"), "{asked}");
    assert!(asked.contains("Good morning, how may I help you?"), "{asked}");
    let view = run_view(&mut b, &agent.id, &run).await;
    let polite = view.cases.iter().find(|c| c.name == "Polite").unwrap().now.clone().unwrap();
    assert_eq!(
        (polite.checks[0].passed, polite.checks[0].detail.as_str()),
        (true, "It greets the visitor and offers help.")
    );
    let rude = view.cases.iter().find(|c| c.name == "Rude").unwrap().now.clone().unwrap();
    assert_eq!((rude.checks[0].passed, rude.checks[0].detail.as_str()), (false, "No greeting."));
    // The judge's call is in the ledger and in the case's cost.
    app.engine().flush().await;
    let judged: Vec<f64> = sqlx::query_scalar("SELECT cost_usd FROM usage_ledger WHERE model = 'grader-1'")
        .fetch_all(app.db().writer())
        .await
        .unwrap();
    assert_eq!(judged.len(), 2);
    let answer_cost: f64 = sqlx::query_scalar("SELECT SUM(cost_usd) FROM usage_ledger WHERE model <> 'grader-1'")
        .fetch_one(app.db().writer())
        .await
        .unwrap();
    assert!((done.cost_usd - (answer_cost + judged.iter().sum::<f64>())).abs() < 1e-9, "{done:?}");
}
