//! The stream writer's batches (issue 14, bursts): many answers finishing at once are stored by a
//! few statements (one `UPDATE … FROM (VALUES …)` for their messages, one for their
//! conversations, multi-row ledger inserts, one settlement per spender and day, one statement
//! for the slots given back) with the same result as storing them one by one. Runs on SQLite
//! and, with `PARLEY_TEST_POSTGRES`, on PostgreSQL.

use crate::harness::fixtures;
use crate::harness::*;
use parley_engine::store::batch::{self, Batch, FinishedMessage};
use parley_engine::store::messages::NewTurn;
use parley_engine::store::spend::SpendSettle;
use parley_engine::store::usage::UsageRecord;
use parley_protocol::{Block, Citation, Citations, MessageStatus};

fn turn(conversation: &str, new: Option<(&str, &str)>, n: u32, slot: Option<&str>) -> NewTurn {
    NewTurn {
        conversation_id: conversation.into(),
        new_conversation: new.map(|(a, v)| (a.to_owned(), v.to_owned())),
        visitor_message_id: format!("{conversation}-v{n}"),
        text: format!("question {n}"),
        client_message_id: None,
        assistant_message_id: Some(format!("{conversation}-a{n}")),
        assistant_start_seq: u64::from(n) * 10,
        now: 1_000,
        attachments: Vec::new(),
        owner: Some("p1".into()),
        slot_token: slot.map(str::to_owned),
        tell_assignee: false,
        attributes: None,
        visitor_blocks: String::new(),
        agent_version: Some(1),
        trial: false,
    }
}

fn finished(
    conversation: &str,
    n: u32,
    text: &str,
    status: MessageStatus,
    at: i64,
    state: Option<&str>,
) -> FinishedMessage {
    FinishedMessage {
        conversation_id: conversation.into(),
        message_id: format!("{conversation}-a{n}"),
        content: text.into(),
        blocks: Vec::new(),
        status,
        at,
        consulting_state: state.map(str::to_owned),
    }
}

fn usage(agent: &str, conversation: &str, cost: f64, settles: Vec<SpendSettle>) -> UsageRecord {
    UsageRecord {
        agent_id: agent.into(),
        conversation_id: Some(conversation.into()),
        message_id: Some(format!("{conversation}-a1")),
        provider: "openai".into(),
        model: "m".into(),
        outcome: "ok".into(),
        input_tokens: 10,
        output_tokens: 5,
        cost_usd: cost,
        created_at: 2_000,
        settles,
        ..UsageRecord::default()
    }
}

fn settle(spender: &str, cost: f64, release: f64) -> SpendSettle {
    SpendSettle { spender: spender.into(), day: 7, cost_usd: cost, release_usd: release }
}

async fn write(app: &TestApp, batch: &Batch) {
    let mut conn = app.db().writer().acquire().await.expect("connection");
    batch::write(&mut conn, app.db().kind(), batch).await.expect("batch stored");
}

async fn message(app: &TestApp, id: &str) -> (String, String, String, i64) {
    sqlx::query_as("SELECT content, blocks, status, updated_at FROM messages WHERE id = $1")
        .bind(id)
        .fetch_one(app.db().writer())
        .await
        .expect("message row")
}

async fn conversation(app: &TestApp, id: &str) -> (i64, Option<String>, Option<String>) {
    sqlx::query_as("SELECT updated_at, consulting_state, slot_token FROM conversations WHERE id = $1")
        .bind(id)
        .fetch_one(app.db().writer())
        .await
        .expect("conversation row")
}

#[tokio::test]
async fn answers_finishing_together_are_stored_as_if_one_by_one() {
    let app = spawn_app().await;
    let agent = app.insert_agent(fixtures::agent("batches", fixtures::openai_provider(&app.fake))).await;
    app.visitor("batches").await;
    let visitor: String = sqlx::query_scalar("SELECT id FROM visitors WHERE agent_id = $1")
        .bind(&agent.id)
        .fetch_one(app.db().writer())
        .await
        .expect("the visitor");
    let who = Some((agent.id.as_str(), visitor.as_str()));
    // Three conversations: c1 with two answers, c2 with an earlier consulting state, c3 whose
    // answer a recovery already marked interrupted.
    let turns = Batch {
        turns: vec![
            turn("c1", who, 1, Some("t1")),
            turn("c1", None, 2, None),
            turn("c2", who, 1, Some("t2")),
            turn("c3", who, 1, None),
        ],
        ..Batch::default()
    };
    write(&app, &turns).await;
    for (sql, id) in [
        ("UPDATE conversations SET consulting_state = 'earlier' WHERE id = $1", "c2"),
        ("UPDATE messages SET status = 'interrupted' WHERE id = $1", "c3-a1"),
    ] {
        sqlx::query(sql).bind(id).execute(app.db().writer()).await.expect("set up");
    }
    sqlx::query("INSERT INTO spend_days (spender, day, spent, held) VALUES ('agent:x', 7, 1.0, 0.5)")
        .execute(app.db().writer())
        .await
        .expect("a spend row");

    let citations = Block::Citations(Citations {
        sources: vec![Citation { title: "Doc".into(), url: None, article_id: Some("k1".into()) }],
        fallback_text: "Doc".into(),
    });
    let mut first = finished("c1", 1, "answer one", MessageStatus::Complete, 5_000, Some("{\"step\":1}"));
    first.blocks = vec![citations.clone()];
    let ends = Batch {
        usage: vec![
            usage(&agent.id, "c1", 0.2, vec![settle("agent:x", 0.2, 0.3)]),
            usage(&agent.id, "c1", 0.1, vec![settle("agent:x", 0.1, 0.4)]),
            usage(&agent.id, "c2", 0.0, Vec::new()),
        ],
        finished: vec![
            first,
            finished("c1", 2, "answer two", MessageStatus::Stopped, 6_000, None),
            finished("c2", 1, "answer three", MessageStatus::Failed, 7_000, None),
            finished("c3", 1, "late answer", MessageStatus::Complete, 8_000, Some("{\"late\":true}")),
            // Finished twice: the first end stands.
            finished("c2", 1, "again", MessageStatus::Complete, 9_000, None),
        ],
        // c1's own token gives its slot back; c2's was taken over by another holder meanwhile.
        slot_releases: vec![("c1".into(), "t1".into()), ("c2".into(), "not-t2".into())],
        ..Batch::default()
    };
    write(&app, &ends).await;

    let (content, blocks, status, at) = message(&app, "c1-a1").await;
    assert_eq!((content.as_str(), status.as_str(), at), ("answer one", "complete", 5_000));
    let blocks: Vec<Block> = serde_json::from_str(&blocks).expect("blocks as JSON");
    assert_eq!(blocks, vec![citations]);
    let (content, _, status, at) = message(&app, "c1-a2").await;
    assert_eq!((content.as_str(), status.as_str(), at), ("answer two", "stopped", 6_000));
    let (content, _, status, at) = message(&app, "c2-a1").await;
    assert_eq!((content.as_str(), status.as_str(), at), ("answer three", "failed", 7_000));
    let (content, _, status, _) = message(&app, "c3-a1").await;
    assert_eq!((content.as_str(), status.as_str()), ("", "interrupted"), "a recovered answer stays so");

    // c1: its last answer's time, the last consulting state reported; slot given back.
    assert_eq!(conversation(&app, "c1").await, (6_000, Some("{\"step\":1}".into()), None));
    // c2: the latest time of the two ends; no new state keeps the earlier one; the slot stays.
    assert_eq!(conversation(&app, "c2").await, (9_000, Some("earlier".into()), Some("t2".into())));
    assert_eq!(conversation(&app, "c3").await.1.as_deref(), Some("{\"late\":true}"));

    assert_eq!(app.count("usage_ledger").await, 3);
    let (spent, held): (f64, f64) =
        sqlx::query_as("SELECT spent, held FROM spend_days WHERE spender = 'agent:x' AND day = 7")
            .fetch_one(app.db().writer())
            .await
            .expect("the spend row");
    assert!((spent - 1.3).abs() < 1e-9, "spent {spent}");
    assert_eq!(held, 0.0, "0.5 held, 0.3 then 0.4 released: nothing left, never below zero");
}

#[tokio::test]
async fn a_burst_of_answers_is_a_few_statements() {
    let finished: Vec<FinishedMessage> =
        (0..1_000).map(|i| finished(&format!("c{i}"), 1, "text", MessageStatus::Complete, 1, None)).collect();
    let usage: Vec<UsageRecord> = (0..1_000).map(|i| usage("a", &format!("c{i}"), 0.01, Vec::new())).collect();
    let slot_releases = (0..1_000).map(|i| (format!("c{i}"), format!("t{i}"))).collect();
    let batch = Batch { finished, usage, slot_releases, ..Batch::default() };
    // 1,000 answers: 5 + 5 + 5 + 2 statements rather than 4,000.
    assert_eq!(batch::statements(&batch).len(), 17);
}
