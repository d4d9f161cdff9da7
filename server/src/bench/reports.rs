//! `parley bench-reports`: the reports' goal (issue 45: a 90-day report over 100,000
//! conversations with their messages and events in ≤ 500 ms, on SQLite and PostgreSQL) measured
//! in one run. It fills a fresh database — a SQLite file, or the empty PostgreSQL database named
//! by `--database-url` — with conversations spread over the period (visitor and assistant
//! messages, stream events, tool calls, hand-overs with operator replies, ratings, usage, orders),
//! builds the reports' roll-up once (timed: what a server upgraded with old data does once), and
//! then times the report as the console asks for it: all agents by day, one agent by week, and
//! the catch-up after new conversations arrive.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use parley_engine::engine::Engine;
use parley_engine::store::agents;
use parley_engine::store::script::{self, Arg};
use parley_engine::store::{insert_rows, new_id};
use parley_protocol::report::ReportQuery;

/// Flags of `parley bench-reports`.
#[derive(clap::Args, Clone, Debug)]
pub struct ReportBenchArgs {
    #[arg(long, default_value_t = 100_000)]
    pub conversations: usize,
    /// The report's period in days (the conversations are spread over it).
    #[arg(long, default_value_t = 90)]
    pub days: i64,
    /// Reports timed per kind (the median and the slowest are printed).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// An empty PostgreSQL database to fill instead of a fresh SQLite file.
    #[arg(long)]
    pub database_url: Option<String>,
    /// Write the figures here as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

const DAY: i64 = 86_400_000;
const AGENTS: usize = 3;

/// Rows for `n` conversations from `first` (numbered `first..first + n`), created between
/// `start` and `start + span` ms, in insert statements per table.
struct Rows {
    visitors: Vec<Vec<Arg>>,
    conversations: Vec<Vec<Arg>>,
    messages: Vec<Vec<Arg>>,
    events: Vec<Vec<Arg>>,
    tools: Vec<Vec<Arg>>,
    ratings: Vec<Vec<Arg>>,
    usage: Vec<Vec<Arg>>,
    orders: Vec<Vec<Arg>>,
}

/// `touched`: the conversations' last change, when later than their own times (new messages).
fn rows(
    agents: &[String],
    operator: &str,
    first: usize,
    n: usize,
    (start, span): (i64, i64),
    touched: Option<i64>,
) -> Rows {
    let mut r = Rows {
        visitors: Vec::new(),
        conversations: Vec::new(),
        messages: Vec::new(),
        events: Vec::new(),
        tools: Vec::new(),
        ratings: Vec::new(),
        usage: Vec::new(),
        orders: Vec::new(),
    };
    let text = |s: &str| Arg::Text(s.to_owned());
    for i in first..first + n {
        let agent = &agents[i % agents.len()];
        let at = start + (i as i64 * 7_919_000) % span;
        let conv = format!("bc{i}");
        // Returning visitors: one person in three writes again.
        let visitor = format!("bv{}", i - i % 3);
        if i % 3 == 0 {
            r.visitors.push(vec![text(&visitor), text(agent), text(&format!("bh{i}")), Arg::Int(at), Arg::Int(at)]);
        }
        let handed = i % 5 == 0;
        let closed = i % 10 == 0;
        let status = if closed {
            "closed"
        } else if handed {
            "human"
        } else {
            "bot"
        };
        r.conversations.push(vec![
            text(&conv),
            text(agent),
            text(&visitor),
            text(status),
            Arg::Int(at),
            Arg::Int(touched.unwrap_or(at + 600_000)),
        ]);
        let version = Arg::Int(1 + (i % 2) as i64);
        let mut seq = 0;
        let mut event = |r: &mut Rows, name: &str, data: &str, t: i64| {
            seq += 1;
            r.events.push(vec![text(&conv), Arg::Int(seq), Arg::Int(seq), text(name), text(data), Arg::Int(t)]);
        };
        for turn in 0..2i64 {
            let t = at + turn * 120_000;
            let (q, a) = (format!("{conv}q{turn}"), format!("{conv}a{turn}"));
            r.messages.push(vec![
                text(&q),
                text(&conv),
                text("visitor"),
                text("How long does a refund take?"),
                text("complete"),
                Arg::Int(t),
                Arg::MaybeText(None),
                Arg::MaybeText(None),
                Arg::MaybeInt(None),
                text("[]"),
                Arg::Int(0),
                Arg::Int(t),
            ]);
            r.messages.push(vec![
                text(&a),
                text(&conv),
                text("assistant"),
                text("Refunds take five working days."),
                text(if i % 17 == 0 { "failed" } else { "complete" }),
                Arg::Int(t + 2_000),
                Arg::MaybeText(None),
                Arg::MaybeText(None),
                version.clone(),
                text("[]"),
                Arg::Int(0),
                Arg::Int(t + 2_000),
            ]);
            event(&mut r, "message_start", "{}", t + 500);
            for _ in 0..3 {
                event(&mut r, "token", "{\"text\":\"Refunds \"}", t + 1_000);
            }
            event(&mut r, "message_end", "{}", t + 2_000);
            r.usage.push(vec![
                text(&format!("bu{i}-{turn}")),
                text(agent),
                text(&conv),
                text(&a),
                text("openai"),
                text(if i % 4 == 0 { "gpt-b" } else { "gpt-a" }),
                text("ok"),
                Arg::Int(800),
                Arg::Int(60),
                Arg::Int(0),
                Arg::Float(0.0012),
                Arg::Int(900),
                Arg::Int(t + 2_000),
            ]);
            let found = if i % 7 == 0 {
                "{\"success\":true,\"sources\":[]}"
            } else {
                "{\"success\":true,\"sources\":[{\"title\":\"Refunds\"}]}"
            };
            r.tools.push(vec![
                text(&format!("bt{i}-{turn}")),
                text(&a),
                text(&conv),
                text("call"),
                Arg::Int(0),
                text("search_knowledge"),
                text("{}"),
                text(found),
                text("done"),
                Arg::Int(t + 1_000),
            ]);
        }
        if handed {
            let h = at + 300_000;
            event(&mut r, "handoff", if i % 2 == 0 { "{\"to\":\"waiting\"}" } else { "{\"to\":\"human\"}" }, h);
            let reply = h + 60_000 * (1 + (i % 30) as i64);
            r.messages.push(vec![
                text(&format!("{conv}o")),
                text(&conv),
                text("operator"),
                text("Hello, a person here."),
                text("complete"),
                Arg::Int(reply),
                text("Bench operator"),
                text(operator),
                Arg::MaybeInt(None),
                text("[]"),
                Arg::Int(0),
                Arg::Int(reply),
            ]);
            if closed {
                event(&mut r, "handoff", "{\"to\":\"closed\"}", reply + 600_000);
            }
        }
        if i % 10 == 3 {
            r.ratings.push(vec![
                text(&format!("br{i}")),
                text(agent),
                text(&conv),
                text(&format!("{conv}a1")),
                Arg::Int(if i % 20 == 3 { -1 } else { 1 }),
                Arg::Int(at + 300_000),
                Arg::Int(at + 300_000),
            ]);
        }
        if closed {
            r.ratings.push(vec![
                text(&format!("bs{i}")),
                text(agent),
                text(&conv),
                text(""),
                Arg::Int(1 + (i % 5) as i64),
                Arg::Int(at + 900_000),
                Arg::Int(at + 900_000),
            ]);
        }
        if i % 50 == 0 {
            r.orders.push(vec![
                text(&format!("bo{i}")),
                text(agent),
                text(&conv),
                text(&visitor),
                text(&format!("{conv}a0")),
                text("ASSESSMENT"),
                text("QMAS"),
                Arg::Int(5000),
                text("USD"),
                text("CARD"),
                text(if i % 100 == 0 { "paid" } else { "pending" }),
                text("sandbox"),
                text("https://pay.example/"),
                text(&format!("bk{i}")),
                Arg::Int(at),
                Arg::Int(at + DAY),
                Arg::Int(at),
            ]);
        }
    }
    r
}

async fn insert(engine: &Engine, r: Rows) -> anyhow::Result<()> {
    let stmts = [
        insert_rows("visitors (id, agent_id, token_hash, created_at, last_seen_at)", 5, r.visitors, 1000),
        insert_rows(
            "conversations (id, agent_id, visitor_id, status, created_at, updated_at)",
            6,
            r.conversations,
            1000,
        ),
        insert_rows(
            "messages (id, conversation_id, role, content, status, created_at, author, author_id, agent_version, blocks, start_seq, updated_at)",
            12,
            r.messages,
            1000,
        ),
        insert_rows("events (conversation_id, seq, last_seq, name, data, created_at)", 6, r.events, 1000),
        insert_rows(
            "tool_calls (id, message_id, conversation_id, call_id, hop, name, arguments, result, status, created_at)",
            10,
            r.tools,
            1000,
        ),
        insert_rows(
            "ratings (id, agent_id, conversation_id, message_id, score, created_at, updated_at)",
            7,
            r.ratings,
            1000,
        ),
        insert_rows(
            "usage_ledger (id, agent_id, conversation_id, message_id, provider, model, outcome, input_tokens, output_tokens, cached_tokens, cost_usd, latency_ms, created_at)",
            13,
            r.usage,
            1000,
        ),
        insert_rows(
            "orders (id, agent_id, conversation_id, visitor_id, message_id, service_type, category, amount_minor, currency, method, status, provider, pay_url, idempotency_key, created_at, expires_at, updated_at)",
            17,
            r.orders,
            1000,
        ),
    ];
    let db = engine.db();
    let mut conn = db.writer().acquire().await?;
    for group in stmts {
        script::run(&mut conn, db.kind(), &group).await?;
    }
    Ok(())
}

fn median_and_max(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() - 1])
}

pub async fn run(args: ReportBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.conversations > 0 && args.days > 0 && args.rounds > 0, "nothing to measure");
    let dir = tempfile::tempdir()?;
    let url = args
        .database_url
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display()));
    let config = crate::Config::for_tests(url, dir.path().to_path_buf());
    let engine = crate::cli_engine(&config).await?;
    let now = engine.now_ms();
    let mut agent_ids = Vec::new();
    for i in 0..AGENTS {
        let a =
            agents::insert(engine.db(), &super::demo_agent(&format!("bench-reports-{i}"), &format!("Bench {i}")), now)
                .await
                .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        agent_ids.push(a.id);
    }
    let operator = new_id();
    sqlx::query(
        "INSERT INTO users (id, email, name, role, password_hash, created_at) VALUES ($1, $2, 'Bench operator', 'operator', 'x', $3)",
    )
    .bind(&operator)
    .bind(format!("{operator}@bench.example"))
    .bind(now)
    .execute(engine.db().writer())
    .await?;

    // The period: the last `days` full UTC days before today.
    let today = now - now.rem_euclid(DAY);
    let start = today - args.days * DAY;
    let span = args.days * DAY;
    let filling = Instant::now();
    let per = 5_000;
    let mut done = 0;
    while done < args.conversations {
        let n = per.min(args.conversations - done);
        insert(&engine, rows(&agent_ids, &operator, done, n, (start, span), None)).await.context("filling")?;
        done += n;
    }
    let fill_s = filling.elapsed().as_secs_f64();
    let count = |table: &'static str| {
        let db = engine.db().clone();
        async move {
            let (n,): (i64,) = sqlx::query_as(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(db.pool()).await?;
            anyhow::Ok(n)
        }
    };
    println!(
        "filled {} conversations, {} messages, {} events, {} tool calls, {} usage rows over {} days in {:.1} s ({})",
        count("conversations").await?,
        count("messages").await?,
        count("events").await?,
        count("tool_calls").await?,
        count("usage_ledger").await?,
        args.days,
        fill_s,
        if args.database_url.is_some() { "PostgreSQL" } else { "SQLite" }
    );

    // PostgreSQL's planner needs statistics, which autovacuum gathers on a live database some
    // time after a bulk load; gather them now, as it would.
    let analyze = || async {
        if args.database_url.is_some() {
            sqlx::query("ANALYZE").execute(engine.db().writer()).await?;
        }
        anyhow::Ok(())
    };
    analyze().await?;
    let building = Instant::now();
    let built = engine.refresh_reports().await?;
    let build_s = building.elapsed().as_secs_f64();
    analyze().await?;
    println!("roll-up built once for {built} conversations in {build_s:.1} s");

    let date = |ms: i64| parley_engine::engine::reports::period::date_of(ms.div_euclid(DAY)).to_string();
    let all = ReportQuery {
        from: date(start),
        to: date(today - DAY),
        time_zone: "UTC".into(),
        by: "day".into(),
        ..ReportQuery::default()
    };
    let one = ReportQuery { agent_id: agent_ids[0].clone(), by: "week".into(), ..all.clone() };
    let mut figures = serde_json::Map::new();
    for (name, q) in [("all agents by day", &all), ("one agent by week", &one)] {
        let mut times = Vec::new();
        let mut conversations = 0;
        for _ in 0..args.rounds {
            let t = Instant::now();
            let r = engine.report(q).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            conversations = r.current.conversations;
        }
        let (median, max) = median_and_max(times);
        println!(
            "report, {name}, {} days: {conversations} conversations; median {median:.0} ms, slowest {max:.0} ms",
            args.days
        );
        figures.insert(format!("{name} median ms"), median.into());
        figures.insert(format!("{name} slowest ms"), max.into());
    }

    // New conversations arrive (changed just now): the next report catches up first.
    let touched = engine.now_ms();
    insert(&engine, rows(&agent_ids, &operator, args.conversations, 100, (today - DAY, DAY / 2), Some(touched)))
        .await?;
    let t = Instant::now();
    let r = engine.report(&all).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let catch_up = t.elapsed().as_secs_f64() * 1000.0;
    println!(
        "report after 100 new conversations (catching up first): {} conversations in {catch_up:.0} ms",
        r.current.conversations
    );
    figures.insert("catch-up report ms".into(), catch_up.into());
    figures.insert("fill s".into(), fill_s.into());
    figures.insert("roll-up build s".into(), build_s.into());
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}
