//! Several server processes on one database (issue 14): periodic jobs that change shared data
//! run once across replicas, not once per process; daily spending caps hold across replicas; an
//! edit of the knowledge on one reaches the others.

use std::time::Duration;

use parley_app::server::engine::jobs::Job;
use parley_app::server::store::agents::AgentLimits;
use parley_app::server::store::spend::{self, SpendSettle};
use parley_app::server::store::usage::Spender;
use parley_app::server::store::{Db, DbKind, jobs, script};
use parley_server::fake_openai::Reply;
use serde_json::json;

use crate::guards::error_codes;

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
    use parley_app::server::engine::clock::{Clock, SystemClock};
    use parley_app::server::engine::knowledge::SearchQuery;
    use parley_app::server::store::knowledge::{self, NewArticle};

    let app = spawn_app().await;
    let agent = app.agent("kb", &["knowledge_search"]).await;
    let second = app.restart().await;
    let now = SystemClock.now_ms();
    let base = knowledge::create_base(app.db(), &agent.id, "Help", "", now).await.unwrap();
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
    script::run(&mut *a.writer().acquire().await.unwrap(), a.kind(), &[spend::settle_stmt(&settle)]).await.unwrap();
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
    script::run(&mut *b.writer().acquire().await.unwrap(), b.kind(), &[spend::settle_stmt(&settle)]).await.unwrap();
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
        use parley_app::server::engine::clock::{Clock, SystemClock};
        SystemClock.now_ms()
    };
    sqlx::query(
        "INSERT INTO usage_ledger (id, agent_id, conversation_id, message_id, provider, model, outcome, input_tokens, \
         output_tokens, cached_tokens, cost_usd, latency_ms, created_at) \
         VALUES ('earlier', $1, NULL, NULL, 'openai', 'gpt-4o-mini', 'ok', 0, 0, 0, $2, 1, $3)",
    )
    .bind(&agent.id)
    .bind(cap - 0.000_000_1)
    .bind(now)
    .execute(app.db().writer())
    .await
    .unwrap();
    let second = app.restart().await;
    assert!(second.state.engine.budgets().is_shared());
    let (alice, bob) = (app.visitor("plain").await, app.visitor("plain").await);
    for _ in 0..2 {
        app.fake.push(Reply::Delayed(Duration::from_millis(300), Box::new(Reply::text("Slow answer."))));
    }
    let on_second = async {
        let r = app
            .client
            .post(format!("{}/api/v1/chat", second.url()))
            .bearer_auth(&bob)
            .json(&json!({"agent": "plain", "message": "two"}))
            .send()
            .await
            .unwrap();
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
