//! Nothing lost (issue 13), with real processes and real signals: `kill -9` mid-answer and a
//! restart, SIGTERM with and without enough grace, a database cut mid-stream (PostgreSQL behind
//! a proxy the test controls), NUL characters from the visitor and the model, and `/metrics`
//! read by a Prometheus text parser.

use std::time::Duration;

use parley_engine::engine::writer::expand;
use parley_engine::store::Db;
use parley_engine::store::events::EventRow;
use parley_protocol::{Block, MessageStatus, StreamEvent, ToolCallStatus, Transcript};
use parley_server::fake_openai::{FakeOpenAi, Reply};
use prometheus_parse::{Scrape, Value as Metric};
use serde_json::json;

use crate::harness::*;

/// Every stored event of a conversation, expanded to one per sequence number.
async fn stored_events(db: &Db, conversation: &str) -> Vec<(u64, StreamEvent)> {
    let rows: Vec<(i64, i64, String, String, i64)> = sqlx::query_as(
        "SELECT seq, last_seq, name, data, created_at FROM events WHERE conversation_id = $1 ORDER BY seq",
    )
    .bind(conversation)
    .fetch_all(db.pool())
    .await
    .unwrap();
    rows.into_iter()
        .flat_map(|(seq, last_seq, name, data, created_at)| {
            expand(&EventRow {
                conversation_id: conversation.into(),
                seq: seq as u64,
                last_seq: last_seq as u64,
                name,
                data,
                created_at,
            })
        })
        .collect()
}

/// `(outcome, estimated, output_tokens)` of the ledger rows of a message.
async fn ledger(db: &Db, message: &str) -> Vec<(String, i64, i64)> {
    sqlx::query_as(
        "SELECT outcome, estimated, output_tokens FROM usage_ledger WHERE message_id = $1 ORDER BY created_at",
    )
    .bind(message)
    .fetch_all(db.pool())
    .await
    .unwrap()
}

async fn transcript(p: &ParleyProcess, token: &str, conversation: &str) -> Transcript {
    let r = reqwest::Client::new()
        .get(p.url(&format!("/api/v1/conversations/{conversation}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

async fn health(url: &str) -> u16 {
    match reqwest::Client::new().get(format!("{url}/healthz")).timeout(Duration::from_secs(5)).send().await {
        Ok(r) => r.status().as_u16(),
        Err(_) => 0,
    }
}

fn words(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("w{i} ")).collect()
}

#[tokio::test]
async fn kill_9_mid_answer_keeps_what_the_visitor_saw_and_the_usage() {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let fake = FakeOpenAi::start().await;
    prepare(&url, dir.path(), "durable", &["ticket_escalation"], &fake).await;
    fake.push_tool_call("escalate_to_human", json!({"reason": "a person"}));
    fake.push(Reply::Endless { piece: "part ".into(), every: Duration::from_millis(30) });
    // A short lease, so that on PostgreSQL the next process recovers the answer soon.
    let env = [("PARLEY_LEASE_TTL_SECS", "6")];
    let mut first = start_parley(&url, dir.path(), &env).await;
    let token = first.visitor("durable").await;
    let mut live = Live::new(first.send(&token, "durable", "I need a person").await);
    live.until(|e| shape(e).iter().any(|s| s == "block:escalation_button") && tokens(e) >= 3).await;
    let conversation = conversation_id(&live.events);
    let message = message_id(&live.events);

    // The writer stores every ~50 ms: wait for the block and some text to be stored.
    let db = Db::connect(&url).await.unwrap();
    within(5, "block and text stored", async || {
        let stored = stored_events(&db, &conversation).await;
        stored.iter().any(|(_, e)| matches!(e, StreamEvent::Block(_)))
            && stored.iter().filter(|(_, e)| matches!(e, StreamEvent::Token(_))).count() >= 2
    })
    .await;
    first.kill_9().await;
    assert!(!first.exit(Duration::from_secs(5)).await.success());
    let last_seen = live.events.last().unwrap().0;

    let second = start_parley(&url, dir.path(), &env).await;
    // SQLite: recovered at start; PostgreSQL: once the dead process's lease has expired.
    let mut t = transcript(&second, &token, &conversation).await;
    within(20, "the answer is recovered", async || {
        t = transcript(&second, &token, &conversation).await;
        t.messages[1].status != MessageStatus::Streaming
    })
    .await;
    let answer = &t.messages[1];
    assert_eq!((answer.id.as_str(), answer.status), (message.as_str(), MessageStatus::Interrupted));
    assert!(answer.text.starts_with("part part "), "partial text kept: {:?}", answer.text);
    assert!(
        matches!(answer.blocks.as_slice(), [Block::EscalationButton(_)]),
        "the block the visitor saw is in the transcript: {:?}",
        answer.blocks
    );
    let calls: Vec<_> = answer.tool_calls.iter().map(|c| (c.name.as_str(), c.status)).collect();
    assert_eq!(calls, [("escalate_to_human", ToolCallStatus::Succeeded)]);

    // The first call (the tool request) was metered; the call cut by the kill is estimated.
    let rows = ledger(&db, &message).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((rows[0].0.as_str(), rows[0].1), ("ok", 0));
    assert_eq!((rows[1].0.as_str(), rows[1].1), ("interrupted", 1));
    assert!(rows[1].2 > 0, "the partial answer's tokens are counted: {rows:?}");

    // A widget that resumes from what it saw gets the end.
    let resumed = reqwest::Client::new()
        .get(second.url(&format!("/api/v1/conversations/{conversation}/events")))
        .bearer_auth(&token)
        .header("Last-Event-ID", last_seen.to_string())
        .send()
        .await
        .unwrap();
    let mut resumed = Live::new(resumed);
    resumed.until_end().await;
    assert_eq!(shape(&resumed.events).last().unwrap(), "message_end:interrupted");
    // The recovery ran once: one closing event.
    let ends =
        stored_events(&db, &conversation).await.into_iter().filter(|(_, e)| matches!(e, StreamEvent::MessageEnd(_)));
    assert_eq!(ends.count(), 1);
}

#[tokio::test]
async fn sigterm_lets_the_running_answer_finish_refuses_new_turns_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let fake = FakeOpenAi::start().await;
    prepare(&url, dir.path(), "graceful", &[], &fake).await;
    fake.push(Reply::Content { pieces: words(30), delay: Duration::from_millis(60) });
    let mut p = start_parley(&url, dir.path(), &[("PARLEY_SHUTDOWN_GRACE_SECS", "20")]).await;
    let (token, other) = (p.visitor("graceful").await, p.visitor("graceful").await);
    let mut live = Live::new(p.send(&token, "graceful", "tell me").await);
    live.until(|e| tokens(e) >= 2).await;

    p.signal("TERM");
    within(5, "health goes 503 while draining", async || health(&p.url).await == 503).await;
    let refused = p.send(&other, "graceful", "me too").await;
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().get("retry-after").is_some(), "Retry-After");
    assert_eq!(failure(refused).await, fail(503, "unavailable"));

    live.until_end().await;
    assert_eq!(shape(&live.events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&live.events), words(30).concat());
    live.assert_ends().await;
    let status = p.exit(Duration::from_secs(15)).await;
    assert!(status.success(), "exit code 0: {status}\n{}", p.log());

    let db = Db::connect(&url).await.unwrap();
    let message = message_id(&live.events);
    let (status, content): (String, String) = sqlx::query_as("SELECT status, content FROM messages WHERE id = $1")
        .bind(&message)
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!((status.as_str(), content.as_str()), ("complete", words(30).concat().as_str()));
    assert_eq!(ledger(&db, &message).await.len(), 1);
    let leases: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM processes").fetch_one(db.pool()).await.unwrap();
    assert_eq!(leases, 0, "a clean stop gives its lease up");
    assert_eq!(count_rows(&db, "messages").await, 2, "the refused turn stored nothing");
}

#[tokio::test]
async fn ctrl_c_past_the_grace_period_interrupts_the_answer_and_still_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let fake = FakeOpenAi::start().await;
    prepare(&url, dir.path(), "impatient", &[], &fake).await;
    fake.push(Reply::Endless { piece: "more ".into(), every: Duration::from_millis(30) });
    let mut p = start_parley(&url, dir.path(), &[("PARLEY_SHUTDOWN_GRACE_SECS", "1")]).await;
    let token = p.visitor("impatient").await;
    let mut live = Live::new(p.send(&token, "impatient", "go on").await);
    live.until(|e| tokens(e) >= 2).await;

    p.signal("INT");
    live.until_end().await;
    // No error event: `interrupted` is the end, and the widget offers to ask again.
    assert_eq!(shape(&live.events), ["message_start", "token*", "message_end:interrupted"]);
    live.assert_ends().await;
    let status = p.exit(Duration::from_secs(15)).await;
    assert!(status.success(), "exit code 0: {status}\n{}", p.log());

    let db = Db::connect(&url).await.unwrap();
    let message = message_id(&live.events);
    let (status, content): (String, String) = sqlx::query_as("SELECT status, content FROM messages WHERE id = $1")
        .bind(&message)
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(status, "interrupted");
    assert_eq!(content, text(&live.events), "the text the visitor saw is the stored answer");
    let rows = ledger(&db, &message).await;
    assert_eq!(rows.len(), 1, "the stopped call is charged: {rows:?}");
    assert!(rows[0].2 > 0);
}

async fn count_rows(db: &Db, table: &str) -> i64 {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(db.pool()).await.unwrap()
}

#[tokio::test]
async fn a_database_cut_mid_stream_loses_nothing_and_health_comes_back() {
    if std::env::var("PARLEY_TEST_POSTGRES").map(|v| v.is_empty()).unwrap_or(true) {
        eprintln!("PostgreSQL only (PARLEY_TEST_POSTGRES): a SQLite file cannot be cut");
        return;
    }
    let proxy = CutProxy::start("127.0.0.1:5432".parse().unwrap()).await;
    let through = proxy.addr;
    let app = TestApp::builder()
        .config(move |c| c.database_url = c.database_url.as_deref().map(|u| CutProxy::url_via(through, u)))
        .spawn()
        .await;
    app.agent("cut", &[]).await;
    let token = app.visitor("cut").await;
    let other = app.visitor("cut").await;
    app.fake.push(Reply::Content { pieces: words(40), delay: Duration::from_millis(40) });
    let mut live = Live::new(app.send_raw(&token, json!({"agent": "cut", "message": "long one"})).await);
    live.until(|e| tokens(e) >= 3).await;

    proxy.cut().await;
    within(10, "health goes 503", async || health(&app.url("")).await == 503).await;
    // The answer goes on streaming; its events wait in the writer.
    live.until(|e| tokens(e) >= 15).await;
    let refused = app.send_raw(&other, json!({"agent": "cut", "message": "now?"})).await;
    assert_eq!(failure(refused).await, fail(503, "unavailable"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    proxy.restore();

    live.until_end().await;
    assert_eq!(shape(&live.events).last().unwrap(), "message_end:complete");
    within(15, "health back to 200", async || health(&app.url("")).await == 200).await;
    assert!(app.engine().flush().await);
    assert_eq!(app.engine().writer_queue_depth(), 0, "the queue drained");

    // Every event the visitor got is stored, once, in order.
    let conversation = conversation_id(&live.events);
    let stored = stored_events(app.db(), &conversation).await;
    let streamed: Vec<u64> = live.events.iter().map(|(s, _)| *s).collect();
    let kept: Vec<u64> = stored.iter().map(|(s, _)| *s).filter(|s| streamed.contains(s)).collect();
    assert_eq!(kept, streamed);
    assert_eq!(text(&stored), words(40).concat());
    let messages = parley_engine::store::messages::list(app.db(), &conversation).await.unwrap();
    assert_eq!(
        (messages[1].status, messages[1].content.as_str()),
        (MessageStatus::Complete, words(40).concat().as_str())
    );
}

#[tokio::test]
async fn nul_from_the_visitor_is_refused_and_from_the_model_sinks_no_other_answer() {
    let (app, token) = spawn_chat("nul", &[]).await;
    let other = app.visitor("nul").await;
    let r = app.send_raw(&token, json!({"agent": "nul", "message": "a\u{0}b"})).await;
    assert_eq!(failure(r).await, fail(422, "invalid_body"));
    assert_eq!(app.count("messages").await, 0, "nothing stored");

    // Two answers in the same writer batch, one of them with a NUL from the model.
    app.fake.push(Reply::Content { pieces: vec!["bad\u{0}".into(), "answer".into()], delay: Duration::from_millis(5) });
    app.fake.push(Reply::Content { pieces: vec!["good ".into(), "answer".into()], delay: Duration::from_millis(5) });
    let (a, b) = tokio::join!(app.send(&token, "nul", None, "one"), app.send(&other, "nul", None, "two"));
    assert!(app.engine().flush().await, "nothing refused: the NUL row was repaired");
    for events in [&a, &b] {
        assert_eq!(shape(events).last().unwrap(), "message_end:complete");
        let conversation = conversation_id(events);
        let stored: Vec<u64> = seqs(&stored_events(app.db(), &conversation).await);
        assert_eq!(stored[1..], seqs(events), "every event of {conversation} stored (after the visitor's)");
        let messages = parley_engine::store::messages::list(app.db(), &conversation).await.unwrap();
        // PostgreSQL stores no NUL in text: the writer replaced it; SQLite keeps it.
        assert_eq!(messages[1].content.replace('\u{fffd}', "\u{0}"), text(events));
        assert_eq!(messages[1].status, MessageStatus::Complete);
    }
}

/// The value of a counter or gauge sample with these labels (0 when absent).
fn sample(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match &s.value {
            Metric::Counter(v) | Metric::Gauge(v) | Metric::Untyped(v) => *v,
            Metric::Histogram(buckets) => buckets.iter().map(|b| b.count).fold(0.0, f64::max),
            Metric::Summary(_) => 0.0,
        })
        .reduce(|a, b| a + b)
}

#[tokio::test]
async fn metrics_are_prometheus_text_with_the_turn_tool_token_and_writer_series() {
    let app = TestApp::builder().config(|c| c.limits.limit_sends_per_visitor = 2).spawn().await;
    app.agent("metered", &["ticket_escalation"]).await;
    let token = app.visitor("metered").await;
    app.fake.push_tool_call("escalate_to_human", json!({}));
    app.fake.push_content("Press the button.");
    app.send(&token, "metered", None, "a person please").await;
    app.fake.push_content("Anything else?");
    app.send(&token, "metered", None, "thanks").await;
    let limited = app.send_raw(&token, json!({"agent": "metered", "message": "third"})).await;
    assert_eq!(limited.status(), 429);
    assert!(app.engine().flush().await);

    let body = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let scrape = Scrape::parse(body.lines().map(|l| Ok(l.to_owned()))).expect("Prometheus text");
    let agent = [("agent", "metered")];
    let get = |name: &str, labels: &[(&str, &str)]| sample(&scrape, name, labels);
    assert_eq!(get("parley_turns_started_total", &agent), Some(2.0));
    assert_eq!(get("parley_turns_total", &[("agent", "metered"), ("outcome", "complete")]), Some(2.0));
    assert_eq!(get("parley_ttft_seconds", &agent), Some(2.0), "one first token per turn");
    assert_eq!(get("parley_turn_seconds", &agent), Some(2.0));
    assert!(get("parley_upstream_calls_total", &[("provider", "openai"), ("outcome", "ok")]).unwrap() >= 3.0);
    assert!(get("parley_tool_calls_total", &[("tool", "escalate_to_human"), ("outcome", "succeeded")]).unwrap() >= 1.0);
    assert!(get("parley_tool_call_seconds", &[("tool", "escalate_to_human")]).unwrap() >= 1.0);
    assert!(get("parley_input_tokens_total", &agent).unwrap() > 0.0);
    assert!(get("parley_output_tokens_total", &agent).unwrap() > 0.0);
    assert!(get("parley_cost_microusd_total", &agent).is_some());
    assert!(get("parley_rate_limited_total", &[]).unwrap() >= 1.0);
    assert!(get("parley_writer_batch_seconds", &[]).unwrap() >= 1.0);
    assert!(get("parley_writer_queue_depth", &[]).is_some());
    assert!(get("parley_open_streams", &[]).is_some());
    assert!(get("parley_live_channels", &[]).is_some());
    assert!(get("parley_db_connections", &[("pool", "write"), ("state", "idle")]).is_some());
}

#[tokio::test]
async fn json_logs_carry_the_request_id_into_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let fake = FakeOpenAi::start().await;
    prepare(&url, dir.path(), "logged", &[], &fake).await;
    // A refused model call: the turn (a task of its own) logs a warning.
    fake.push_error(400, &[]);
    let mut p = start_parley(&url, dir.path(), &[("PARLEY_LOG_FORMAT", "json")]).await;
    let token = p.visitor("logged").await;
    let r = reqwest::Client::new()
        .post(p.url("/api/v1/chat"))
        .bearer_auth(&token)
        .header("x-request-id", "req-from-proxy-42")
        .json(&json!({"agent": "logged", "message": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"], "req-from-proxy-42", "the caller's id is kept and sent back");
    let mut live = Live::new(r);
    live.until_end().await;
    assert_eq!(shape(&live.events).last().unwrap(), "message_end:failed");
    // A request without an id gets one of its own.
    let r = reqwest::Client::new().get(p.url("/healthz")).send().await.unwrap();
    let made = r.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert!(made.len() == 32 && made.bytes().all(|b| b.is_ascii_hexdigit()), "{made}");
    p.signal("TERM");
    assert!(p.exit(Duration::from_secs(15)).await.success());

    let log = p.log();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a JSON log line: {e}: {l}")))
        .collect();
    assert!(lines.len() >= 3, "{log}");
    assert!(lines.iter().all(|l| l["timestamp"].is_string() && l["level"].is_string()), "{log}");
    let failed = lines
        .iter()
        .find(|l| l["fields"]["message"] == "model call failed")
        .unwrap_or_else(|| panic!("the turn's warning: {log}"));
    assert_eq!(failed["span"]["id"], "req-from-proxy-42", "the turn's line names the request: {failed}");
}

#[tokio::test]
async fn a_second_server_on_one_sqlite_file_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("parley.db").display());
    let mut first = start_parley(&url, dir.path(), &[]).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let second = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .arg("serve")
        .env("PARLEY_ADDR", format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", &url)
        .env("PARLEY_DATA_DIR", dir.path())
        .output()
        .await
        .unwrap();
    assert!(!second.status.success());
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("another `parley serve` is already using the SQLite database"), "{said}");
    assert!(said.contains("PostgreSQL"), "{said}");
    // The first one is unharmed; once it is gone (even by kill -9) the file is free again.
    assert_eq!(health(&first.url).await, 200);
    first.kill_9().await;
    first.exit(Duration::from_secs(5)).await;
    let again = start_parley(&url, dir.path(), &[]).await;
    assert_eq!(health(&again.url).await, 200);
}

/// A busy moment leaves every read connection kept out of sqlx's pool, idle; the health probe
/// must still get one (it used to wait on sqlx's empty pool and report the database down).
#[tokio::test]
async fn health_is_ok_while_every_read_connection_is_kept_idle() {
    let app = TestApp::builder().spawn().await;
    let db = app.db().clone();
    // As many read connections as the database lends (on PostgreSQL the pool is shared with the
    // writer, so not all of them): all of them out of sqlx's pool, then idle in Parley's hands.
    let max = db.pool().options().get_max_connections() as usize;
    let mut held = Vec::new();
    while held.len() < max {
        match tokio::time::timeout(std::time::Duration::from_millis(500), db.read()).await {
            Ok(Ok(conn)) => held.push(conn),
            _ => break,
        }
    }
    assert!(!held.is_empty());
    drop(held);
    assert_eq!(health(&app.url("")).await, 200);
}
