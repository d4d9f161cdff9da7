//! Several server processes on one database (issue 14): periodic jobs that change shared data
//! run once across replicas, not once per process; daily spending caps hold across replicas; an
//! edit of the knowledge on one reaches the others; a conversation's events are numbered once and
//! its turns run one at a time across replicas, and what one replica streams reaches streams
//! opened on another, also after its listening connection was lost.

use std::time::Duration;

use parley_engine::engine::jobs::Job;
use parley_engine::store::agents::AgentLimits;
use parley_engine::store::spend::{self, SpendSettle};
use parley_engine::store::usage::Spender;
use parley_engine::store::{Db, DbKind, jobs, script, slots};
use parley_protocol::{MessageStatus, StreamEvent};
use parley_server::fake_openai::Reply;
use serde_json::json;

use crate::guards::error_codes;

use crate::harness::fixtures::slow_words;
use crate::harness::*;

#[tokio::test]
async fn a_due_job_is_claimed_by_exactly_one_process_and_again_only_once_due() {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    // Two processes' own pools on one database.
    let (a, b) = (Db::connect(&url).await.unwrap(), Db::connect(&url).await.unwrap());

    // Its first run ever: the process that creates the job's row runs it.
    assert!(jobs::claim(&a, "sweep", 1_000, "a", 10_000).await.unwrap());
    assert!(!jobs::claim(&b, "sweep", 1_000, "b", 10_000).await.unwrap(), "already run at this time");
    assert!(!jobs::claim(&b, "sweep", 1_000, "b", 10_999).await.unwrap(), "not due yet");
    assert_eq!(jobs::last_run(&b, "sweep").await.unwrap(), Some(("a".to_owned(), 10_000)));
    assert!(jobs::claim(&b, "sweep", 1_000, "b", 11_000).await.unwrap(), "due: whoever asks first runs it");
    assert!(!jobs::claim(&a, "sweep", 1_000, "a", 11_500).await.unwrap());
    assert_eq!(jobs::last_run(&a, "sweep").await.unwrap(), Some(("b".to_owned(), 11_000)));

    // Many ticks of both processes at once, for a new job and for a due one: one run each.
    for (job, now) in [("fresh", 20_000), ("sweep", 20_000)] {
        let tries = (0..16).map(|i| {
            let (db, by) = if i % 2 == 0 { (a.clone(), "a") } else { (b.clone(), "b") };
            async move { jobs::claim(&db, job, 1_000, by, now).await.unwrap() }
        });
        let won = futures::future::join_all(tries).await.into_iter().filter(|w| *w).count();
        assert_eq!(won, 1, "{job}: one of 16 simultaneous claims runs it");
    }
}

#[tokio::test]
async fn two_servers_on_one_database_run_the_hourly_jobs_once() {
    let app = spawn_app().await;
    // A second server on the same database (in this test process, as the harness allows).
    let second = app.restart().await;
    let engines = [app.engine(), &second.state.engine];
    assert_ne!(engines[0].process_id(), engines[1].process_id());
    for job in [Job::DeleteUnsentImages, Job::DeleteExpiredSessions, Job::ForgetWebhookIds] {
        // Each server asks at its start; one of them ran the job.
        let mut ran = None;
        for _ in 0..100 {
            ran = jobs::last_run(app.db(), job.name()).await.unwrap();
            if ran.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let (by, _) = ran.unwrap_or_else(|| panic!("{job:?} never ran"));
        assert!(engines.iter().any(|e| e.process_id() == by), "{job:?} was run by {by}");
        // Within the hour, neither runs it again.
        for engine in engines {
            assert!(!engine.claim_job(job).await, "{job:?} ran twice within its period");
        }
        assert_eq!(jobs::last_run(app.db(), job.name()).await.unwrap().map(|r| r.0), Some(by));
    }
}

#[tokio::test]
async fn an_article_added_on_one_server_is_found_by_the_other() {
    use parley_engine::engine::clock::{Clock, SystemClock};
    use parley_engine::engine::knowledge::SearchQuery;
    use parley_engine::store::knowledge::{self, NewArticle};

    let app = spawn_app().await;
    let agent = app.agent("kb", &["knowledge_search"]).await;
    let second = app.restart().await;
    let now = SystemClock.now_ms();
    let base =
        knowledge::create_base(app.db(), &agent.id, &knowledge::BaseFields { name: "Help", ..Default::default() }, now)
            .await
            .unwrap();
    let article = NewArticle {
        title: "Refunds".into(),
        category: None,
        kind: "article".into(),
        body: "Refunds reach the original card within five working days.".into(),
        source_url: None,
    };
    second.state.engine.services().knowledge.add_articles(&base.id, &[article], now).await.unwrap();

    let query = SearchQuery {
        agent_id: &agent.id,
        knowledge_base_ids: None,
        text: "refunds card",
        category: None,
        kind: None,
        limit: 3,
    };
    // The first server notices the change in its background check (every 10 s).
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let hits = app.engine().services().knowledge.search(&query).await.unwrap();
        if hits.iter().any(|h| h.title == "Refunds") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the first server never found the article: {hits:?}");
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

/// The statements behind shared daily totals, on both databases: room is taken atomically at a
/// cap's edge whichever process asks, a settled call's cost replaces its room, and room for a call
/// not made goes back.
#[tokio::test]
async fn shared_daily_totals_let_one_call_through_at_the_cap_edge() {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let (a, b) = (Db::connect(&url).await.unwrap(), Db::connect(&url).await.unwrap());
    let agent = Spender::Agent("ag".into());
    let key = spend::key(&agent);
    let day = 20_000;
    spend::ensure_day(&a, &agent, day, day * 86_400_000).await.unwrap();
    spend::ensure_day(&b, &agent, day, day * 86_400_000).await.unwrap();
    assert_eq!(spend::day(&a, &key, day).await.unwrap(), Some((0.0, 0.0)), "one row, from the (empty) ledger");

    // The first call of the day goes while nothing is held; with room held, the next must fit.
    assert_eq!(spend::take(&a, &key, day, 1.0, 0.6).await.unwrap(), Ok(()));
    assert_eq!(spend::take(&b, &key, day, 1.0, 0.6).await.unwrap(), Err(0.0), "0.6 held + 0.6 > 1.0");
    assert_eq!(spend::take(&b, &key, day, 1.0, 0.3).await.unwrap(), Ok(()));
    // The first call cost 0.7: its room (0.6) is replaced by its cost.
    let settle = SpendSettle { spender: key.clone(), day, cost_usd: 0.7, release_usd: 0.6 };
    script::run(&mut a.writer().acquire().await.unwrap(), a.kind(), &[spend::settle_stmt(&settle)]).await.unwrap();
    let (spent, held) = spend::day(&b, &key, day).await.unwrap().unwrap();
    assert!((spent - 0.7).abs() < 1e-12 && (held - 0.3).abs() < 1e-12, "{spent} {held}");
    // The second call was not made: its room goes back.
    spend::release(&b, &key, day, 0.3).await.unwrap();
    assert_eq!(spend::day(&a, &key, day).await.unwrap().map(|d| d.1), Some(0.0));

    // At the edge (0.7 spent of 1.0, nothing held), 16 calls from two processes at once: each
    // may go alone, but only one can take the room.
    let tries = (0..16).map(|i| {
        let (db, key) = (if i % 2 == 0 { a.clone() } else { b.clone() }, key.clone());
        async move { spend::take(&db, &key, day, 1.0, 0.2).await.unwrap().is_ok() }
    });
    let went = futures::future::join_all(tries).await.into_iter().filter(|w| *w).count();
    assert_eq!(went, 1, "one of 16 simultaneous calls at the edge goes ahead");
    // Spent past the cap: nothing more.
    let settle = SpendSettle { spender: key.clone(), day, cost_usd: 0.5, release_usd: 0.2 };
    script::run(&mut b.writer().acquire().await.unwrap(), b.kind(), &[spend::settle_stmt(&settle)]).await.unwrap();
    assert!(spend::take(&a, &key, day, 1.0, 0.01).await.unwrap().is_err());
}

/// Two servers on one PostgreSQL, a visitor on each, one call's room left in the agent's day:
/// only one call goes upstream. (One process per SQLite database: there the totals are in memory
/// and a second server is refused.)
#[tokio::test]
async fn two_servers_at_the_daily_cap_edge_let_only_one_call_through() {
    let app = spawn_app().await;
    if app.db().kind() != DbKind::Postgres {
        eprintln!("replicas share PostgreSQL only: this test runs in the PostgreSQL pass");
        return;
    }
    let agent = app.agent("plain", &[]).await;
    let cap = 0.01;
    app.set_limits(&agent.id, AgentLimits { daily_cap_usd: Some(cap), ..Default::default() }).await;
    let now = {
        use parley_engine::engine::clock::{Clock, SystemClock};
        SystemClock.now_ms()
    };
    spent_earlier(app.db(), &agent.id, cap - 0.000_000_1, now).await;
    let second = app.restart().await;
    assert!(second.state.engine.budgets().is_shared());
    let (alice, bob) = (app.visitor("plain").await, app.visitor("plain").await);
    for _ in 0..2 {
        app.fake.push(Reply::Delayed(Duration::from_millis(300), Box::new(Reply::text("Slow answer."))));
    }
    let on_second = async {
        let r = app.send_raw_on(&second.url(), &bob, json!({"agent": "plain", "message": "two"})).await;
        assert_eq!(r.status(), 200);
        read_events(r).await
    };
    let (a, b) = tokio::join!(app.send(&alice, "plain", None, "one"), on_second);
    let mut outcomes = [error_codes(&a), error_codes(&b)];
    outcomes.sort();
    assert_eq!(outcomes, [vec![], vec!["BUDGET_EXCEEDED".to_owned()]]);
    assert_eq!(app.fake.served(), 1, "only one call went upstream");

    // The call that went ahead spent past the cap, on whichever server: neither lets another go.
    for base in [app.url(""), second.url()] {
        let token = app.visitor("plain").await;
        let r = app
            .client
            .post(format!("{base}/api/v1/chat"))
            .bearer_auth(&token)
            .json(&json!({"agent": "plain", "message": "three"}))
            .send()
            .await
            .unwrap();
        assert_eq!(error_codes(&read_events(r).await), ["BUDGET_EXCEEDED"]);
    }
    assert_eq!(app.fake.served(), 1);
    app.engine().flush().await;
    second.state.engine.flush().await;
    let spent = app.engine().budgets().spent_today(app.db(), &agent.id, now).await.unwrap().unwrap();
    assert!(spent > cap, "the day's total counts the call: {spent}");
}

/// The slot statements on both databases: one holder at a time, given back only under the token
/// it was taken with, and free once its process's lease has expired.
#[tokio::test]
async fn a_conversations_slot_has_one_live_holder() {
    use parley_engine::store::leases;
    let app = spawn_app().await;
    app.agent("plain", &[]).await;
    let token = app.visitor("plain").await;
    app.fake.push_content("Hello.");
    let conv = conversation_id(&app.send(&token, "plain", None, "hi").await);
    app.engine().flush().await;
    let db = app.db();
    // The first turn's slot was given back after its events.
    assert_eq!(slots::holder(db, &conv).await.unwrap(), None);

    leases::register(db, "proc-a", "host", 1, 10_000).await.unwrap();
    leases::register(db, "proc-b", "host", 2, 10_000).await.unwrap();
    assert!(slots::claim(db, &conv, "proc-a", "t1", 5_000).await.unwrap());
    assert!(!slots::claim(db, &conv, "proc-b", "t2", 5_000).await.unwrap(), "a live process holds it");
    assert!(slots::claim(db, &conv, "proc-a", "t3", 5_000).await.unwrap(), "its own process takes it again");
    // A late give-back of the earlier holding changes nothing.
    let run = |stmt: script::Stmt| async move {
        script::run(&mut db.writer().acquire().await.unwrap(), db.kind(), &[stmt]).await.unwrap();
    };
    run(slots::release_stmt(&conv, "t1")).await;
    assert_eq!(slots::holder(db, &conv).await.unwrap().as_deref(), Some("proc-a"));
    // proc-a's lease is older than the cutoff: it is gone and its slot is free.
    assert!(slots::claim(db, &conv, "proc-b", "t4", 10_001).await.unwrap());
    run(slots::release_stmt(&conv, "t4")).await;
    assert_eq!(slots::holder(db, &conv).await.unwrap(), None);
    assert!(!slots::claim(db, "no-such-conversation", "proc-a", "t5", 0).await.unwrap());
}

/// Two servers on one PostgreSQL; `None` (and a note) on SQLite, which one process owns.
async fn replicas() -> Option<(TestApp, parley_server::Running)> {
    let app = TestApp::builder().with_users(&[crate::harness::fixtures::OLIVE]).spawn().await;
    if app.db().kind() != DbKind::Postgres {
        eprintln!("replicas share PostgreSQL only: this test runs in the PostgreSQL pass");
        return None;
    }
    app.agent("plain", &[]).await;
    let second = app.restart().await;
    // Both listen for each other.
    eventually(async || app.engine().relay_connections() == 1 && second.state.engine.relay_connections() == 1).await;
    Some((app, second))
}

#[tokio::test]
async fn an_answer_streamed_on_one_server_is_followed_live_on_another() {
    let Some((app, second)) = replicas().await else { return };
    let token = app.visitor("plain").await;
    app.fake.push(slow_words(20, 40));
    let mut on_first = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "hello"})).await);
    on_first.until(|e| tokens(e) >= 2).await;
    let conv = conversation_id(&on_first.events);

    // Another tab, whose stream a load balancer sent to the second server, from the start.
    let mut on_second = Live::new(app.follow_on(&second.url(), &token, &conv, 0).await);
    on_second.until_end().await;
    on_first.until_end().await;
    assert!(matches!(&on_second.events[0].1, StreamEvent::VisitorMessage(v) if v.text == "hello"));
    assert_eq!(on_second.events[1..], on_first.events, "the same events with the same numbers");
    assert_numbered_in_order(&on_second.events);
    assert_eq!(text(&on_second.events), (0..20).map(|i| format!("w{i} ")).collect::<String>());
}

#[tokio::test]
async fn a_conversation_runs_one_turn_at_a_time_across_servers_and_numbering_continues() {
    let Some((app, second)) = replicas().await else { return };
    let token = app.visitor("plain").await;
    app.fake.push(slow_words(100, 40));
    let mut first = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "one"})).await);
    first.until(|e| tokens(e) >= 1).await;
    let conv = conversation_id(&first.events);

    // While the first server writes the answer, the second refuses another turn.
    let busy = app
        .send_raw_on(&second.url(), &token, json!({"agent": "plain", "conversation_id": conv, "message": "two"}))
        .await;
    assert_eq!(failure(busy).await, fail(409, "reply_in_progress"));
    first.until_end().await;
    let last = first.events.last().unwrap().0;

    // Once it is over, the second server takes the next turn and numbers after it.
    app.fake.push_content("Second answer.");
    let r = app
        .send_raw_on(&second.url(), &token, json!({"agent": "plain", "conversation_id": conv, "message": "two"}))
        .await;
    assert_eq!(r.status(), 200);
    let next = read_events(r).await;
    // The visitor's message took the next number, the answer's start the one after.
    assert_eq!(next[0].0, last + 2, "numbering continues from the first server's last event");
    assert_eq!(app.fake.served(), 2, "the refused turn called no model");
    // And back on the first server.
    app.fake.push_content("Third answer.");
    let third = app.send(&token, "plain", Some(&conv), "three").await;
    assert_eq!(third[0].0, next.last().unwrap().0 + 2);

    // The whole conversation replays from either server in one order, each number once.
    app.engine().flush().await;
    second.state.engine.flush().await;
    let mut replay = Live::new(app.follow_on(&second.url(), &token, &conv, 0).await);
    replay
        .until(|e| {
            text(e).contains("Third answer.")
                && e.iter().filter(|(_, e)| matches!(e, StreamEvent::MessageEnd(_))).count() == 3
        })
        .await;
    assert_numbered_in_order(&replay.events);
    let stored: Vec<(i64, i64)> =
        sqlx::query_as("SELECT COUNT(*), COUNT(DISTINCT seq) FROM events WHERE conversation_id = $1")
            .bind(&conv)
            .fetch_all(app.db().pool())
            .await
            .unwrap();
    assert_eq!(stored[0].0, stored[0].1, "no number stored twice");
}

#[tokio::test]
async fn an_operator_on_one_server_stops_an_answer_written_on_another() {
    use leptos::server_fn::ServerFn;
    use parley_app::console::api::conversations as c;
    let Some((app, second)) = replicas().await else { return };
    let token = app.visitor("plain").await;
    app.fake.push(Reply::Endless { piece: "more ".into(), every: Duration::from_millis(20) });
    let mut answer = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "talk"})).await);
    answer.until(|e| tokens(e) >= 2).await;
    let conv = conversation_id(&answer.events);
    let mut tab = Live::new(app.follow(&token, &conv, 0).await);

    // Olive works on the console of the second server.
    let mut olive = Browser::new(second.url());
    let (status, body) = olive.sign_in(crate::harness::fixtures::OLIVE.email, crate::harness::fixtures::PASSWORD).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = olive.call(c::Claim::PATH, &[("id", &conv)]).await;
    assert_eq!((status, body.as_str()), (200, "true"));

    // The first server stops its answer; the handoff written by the second reaches its streams.
    answer.until_end().await;
    assert!(matches!(
        answer.events.last().unwrap().1,
        StreamEvent::MessageEnd(ref e) if e.status == MessageStatus::Stopped
    ));
    tab.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::Handoff(h) if h.to == "human"))).await;
    assert_numbered_in_order(&tab.events);

    // Her reply, written on the second server, reaches the visitor's stream on the first.
    let (status, body) = olive.call(c::Reply::PATH, &[("id", &conv), ("text", "Olive here.")]).await;
    assert_eq!(status, 200, "{body}");
    tab.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::OperatorMessage(m) if m.text == "Olive here."))).await;
    assert_numbered_in_order(&tab.events);

    // The visitor's typing on the first server shows on the second server's console feed.
    let mut feed = second.state.engine.console_events();
    let r = app.post(&token, &format!("/api/v1/conversations/{conv}/typing"), json!({"active": true})).await;
    assert!(r.status().is_success(), "{}", r.status());
    let seen = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let e = feed.recv().await.unwrap();
            if e.conversation_id == conv && e.kind == "typing" {
                return e;
            }
        }
    })
    .await;
    assert!(seen.is_ok(), "the second server's console heard of the typing");
}

#[tokio::test]
async fn a_server_that_lost_its_listening_connection_catches_up_from_the_database() {
    let Some((app, second)) = replicas().await else { return };
    let token = app.visitor("plain").await;
    app.fake.push_content("First.");
    let first = app.send(&token, "plain", None, "one").await;
    let conv = conversation_id(&first);
    let mut tab = Live::new(app.follow_on(&second.url(), &token, &conv, first.last().unwrap().0).await);

    // Both listening connections are cut (as by a network blip or a PostgreSQL restart).
    let cut: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()) AS t",
    )
    .fetch_one(app.db().pool())
    .await
    .unwrap();
    assert!(cut >= 2, "both listeners found: {cut}");
    // A turn on the first server while the second hears nothing.
    app.fake.push_content("Said while nobody listened.");
    let during = app.send(&token, "plain", Some(&conv), "two").await;
    app.engine().flush().await;
    assert_eq!(second.state.engine.relay_connections(), 1, "not listening again yet");

    // Listening again, the second server reads what was stored meanwhile.
    tab.until(|e| {
        text(e).contains("Said while nobody listened.")
            && e.iter().any(|(_, e)| matches!(e, StreamEvent::MessageEnd(_)))
    })
    .await;
    assert_eq!(tab.events[1..], during, "the same events, numbered alike");
    assert!(second.state.engine.relay_connections() >= 2);
}

/// A first deploy: two `parley serve` processes started at the same moment on a new PostgreSQL
/// database both come up (neither stops on the other's first administrator or demo agents), with
/// one first administrator and one set of demo agents between them. (`parley bench-replicas`
/// found one replica exiting with "duplicate key" on the administrator's email.)
#[tokio::test]
async fn two_replicas_starting_at_once_on_a_new_database_both_come_up() {
    if !in_postgres_pass() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let (a, b) = tokio::join!(start_parley(&url, dir.path(), &[]), start_parley(&url, dir.path(), &[]));
    let db = Db::connect(&url).await.unwrap();
    let count = |table: &'static str| {
        let db = db.clone();
        async move {
            sqlx::query_scalar::<_, i64>(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(db.pool()).await.unwrap()
        }
    };
    assert_eq!(count("users").await, 1, "one first administrator");
    assert_eq!(count("agents").await, 2, "one set of demo agents");
    for replica in [&a, &b] {
        assert_eq!(reqwest::get(format!("{}/healthz", replica.url)).await.unwrap().status(), 200);
    }
}
