//! The search benchmark (`docs/performance.md`, "Search"): 100,000 messages in 1,000
//! conversations of two agents, indexed by the real job, then queries timed as an admin (sees
//! everything) and as an operator in a team (sees one agent's half). Ignored in ordinary runs:
//! `cargo nextest run --release -p parley-server --run-ignored only search_bench` (and with
//! `PARLEY_TEST_POSTGRES` for PostgreSQL). It prints its figures; only the counts are checked.

use std::time::{Duration, Instant};

use parley_engine::store::script::{self, Arg};
use parley_engine::store::{DbKind, insert_rows};

use crate::harness::fixtures::{ADMIN, OLIVE};
use crate::harness::*;

const CONVERSATIONS: usize = 1_000;
const PER_CONVERSATION: usize = 100;

const ENGLISH: &[&str] = &[
    "order", "delivery", "parcel", "shipping", "address", "payment", "card", "invoice", "account", "password", "login",
    "price", "discount", "coupon", "size", "colour", "return", "exchange", "warranty", "repair", "kettle", "phone",
    "laptop", "charger", "cable", "screen", "battery", "store", "opening", "hours", "please", "thanks", "hello",
    "when", "where", "how", "much", "late", "broken", "missing", "wrong", "help", "today", "tomorrow", "week", "track",
    "number", "email", "call", "back",
];
const CHINESE: &[&str] = &[
    "你好", "订单", "快递", "地址", "付款", "发票", "账户", "密码", "价格", "优惠", "尺码", "颜色", "退货", "换货",
    "保修", "维修", "电池", "屏幕", "门店", "营业", "时间", "谢谢", "请问", "什么", "时候", "哪里", "多少", "迟到",
];

/// A deterministic stream of numbers (no dependency for a benchmark's text).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % below as u64) as usize
    }
}

/// Message `n`'s text: 8 to 20 words, English or Chinese; "refund(s)" in 1 of 20, 退款 in 1 of
/// 30, "zanzibar" in 1 of 10,000.
fn text(rng: &mut Lcg, n: usize) -> String {
    let chinese = rng.next(3) == 0;
    let mut words: Vec<String> = (0..8 + rng.next(13))
        .map(|_| if chinese { CHINESE[rng.next(CHINESE.len())] } else { ENGLISH[rng.next(ENGLISH.len())] }.to_owned())
        .collect();
    if n.is_multiple_of(20) {
        words.push(if n.is_multiple_of(40) { "refunds" } else { "refund" }.into());
    }
    if n.is_multiple_of(30) {
        words.push("我想申请退款".into());
    }
    if n % 10_000 == 7 {
        words.push("zanzibar".into());
    }
    words.join(if chinese { "" } else { " " })
}

/// Median of five runs of a query, in ms; and its total.
async fn time(app: &TestApp, user: &parley_engine::store::users::User, q: &str) -> (f64, i64) {
    let mut ms = Vec::new();
    let mut total = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let (_, n) = app.engine().search(user, q, 0, 25).await.unwrap();
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        total = n;
    }
    ms.sort_by(f64::total_cmp);
    (ms[2], total)
}

#[tokio::test]
#[ignore = "a benchmark: fills 100,000 messages"]
async fn search_bench() {
    let app = TestApp::builder().with_users(&[ADMIN, OLIVE]).spawn().await;
    let shop = app.agent("shop", &[]).await.id;
    let other = app.agent("other", &[]).await.id;
    let admin = parley_engine::store::users::with_hash(app.db(), ADMIN.email).await.unwrap().unwrap().0;
    let olive = parley_engine::store::users::with_hash(app.db(), OLIVE.email).await.unwrap().unwrap().0;
    let mut b_admin = app.signed_in(&ADMIN).await;
    let (status, body) = b_admin
        .call(
            <parley_app::console::api::inbox::SaveTeam as leptos::server_fn::ServerFn>::PATH,
            &[("name", "Sales"), ("mode", "manual"), ("members", &olive.id), ("agents", &shop)],
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let t = Instant::now();
    let start = app.engine().now_ms() - 86_400_000;
    let mut rng = Lcg(43);
    let (mut visitors, mut conversations, mut messages) = (Vec::new(), Vec::new(), Vec::new());
    for c in 0..CONVERSATIONS {
        let (v, conv) = (format!("bench-v-{c}"), format!("bench-c-{c}"));
        let agent = if c % 2 == 0 { &shop } else { &other };
        let at = start + (c * PER_CONVERSATION) as i64;
        visitors.push(vec![
            Arg::from(&v),
            Arg::from(agent),
            Arg::from(format!("hash-{c}")),
            Arg::from(at),
            Arg::from(at),
        ]);
        conversations.push(vec![
            Arg::from(&conv),
            Arg::from(agent),
            Arg::from(&v),
            Arg::from("active"),
            Arg::from(0i64),
            Arg::from(at),
            Arg::from(at),
        ]);
        for m in 0..PER_CONVERSATION {
            let n = c * PER_CONVERSATION + m;
            let role = if m % 2 == 0 { "visitor" } else { "assistant" };
            messages.push(vec![
                Arg::from(format!("bench-m-{n}")),
                Arg::from(&conv),
                Arg::from(role),
                Arg::from(text(&mut rng, n)),
                Arg::from("[]"),
                Arg::from("complete"),
                Arg::from(m as i64),
                Arg::from(at + m as i64),
                Arg::from(at + m as i64),
            ]);
        }
    }
    let mut stmts = insert_rows("visitors (id, agent_id, token_hash, created_at, last_seen_at)", 5, visitors, 200);
    stmts.extend(insert_rows(
        "conversations (id, agent_id, visitor_id, status, lead_submitted, created_at, updated_at)",
        7,
        conversations,
        200,
    ));
    stmts.extend(insert_rows(
        "messages (id, conversation_id, role, content, blocks, status, start_seq, created_at, updated_at)",
        9,
        messages,
        500,
    ));
    let mut conn = app.db().writer().acquire().await.unwrap();
    script::run(&mut conn, app.db().kind(), &stmts).await.unwrap();
    drop(conn);
    println!("filled {} messages in {:.1} s", CONVERSATIONS * PER_CONVERSATION, t.elapsed().as_secs_f64());

    // The job indexes them (at most 5,000 per run, a run every 1.5 s).
    let t = Instant::now();
    within(900, "everything indexed", async || {
        app.count("search_docs").await >= (CONVERSATIONS * PER_CONVERSATION) as i64
    })
    .await;
    let postings = app.count("search_terms").await;
    let db = if app.db().kind() == DbKind::Postgres { "PostgreSQL" } else { "SQLite" };
    println!("{db}: indexed in {:.1} s ({postings} postings)", t.elapsed().as_secs_f64());
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Statistics for the planner, as autovacuum (PostgreSQL) or `PRAGMA optimize` (SQLite) would
    // gather on a database in service: measured right after a bulk fill, plans are blind.
    sqlx::query("ANALYZE").execute(app.db().writer()).await.unwrap();
    if app.db().kind() == DbKind::Postgres {
        for q in ["refund", "zanzibar"] {
            let terms = parley_engine::engine::search::terms_of(q);
            let plan: Vec<String> = sqlx::query_scalar(
                "EXPLAIN SELECT COUNT(DISTINCT d.conversation_id) FROM search_terms t1 CROSS JOIN search_docs d \
                 CROSS JOIN conversations c WHERE t1.term = $1 AND d.id = t1.doc_id AND c.id = d.conversation_id",
            )
            .bind(&terms[0])
            .fetch_all(app.db().pool())
            .await
            .unwrap();
            println!("{db}: plan for {q}:\n  {}", plan.join("\n  "));
        }
    }

    for q in ["refund", "refunds kettle", "退款", "申请退款", "zanzibar", "order delivery please", "谢谢 订单"]
    {
        let (all_ms, all) = time(&app, &admin, q).await;
        let (team_ms, team) = time(&app, &olive, q).await;
        println!(
            "{db}: {q:<24} admin {all:>4} conversations {all_ms:>7.1} ms | operator in a team {team:>4} {team_ms:>7.1} ms"
        );
        assert!(team <= all);
    }
    assert_eq!(time(&app, &admin, "zanzibar").await.1, 10);
}
