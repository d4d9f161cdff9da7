//! The CPU part of `parley bench`: a fixed number of turns in a closed loop (each of
//! `--cpu-concurrency` clients sends its next message as soon as its answer has ended) against
//! the zero-delay upstream, and the CPU time Parley spent on them, read from `/proc` before and
//! after — in all and by thread (tokio's workers, SQLite's connection threads, the rest) — with
//! every answer checked stored whole afterwards.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::probe::{cpu_seconds, threads_cpu_seconds};
use super::streams::{PARLEY, read_stream};
use super::{BenchArgs, Series, series, stored_answers, visitor_token};

/// What the closed loop measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CpuResult {
    pub turns: usize,
    pub concurrency: usize,
    pub errors: usize,
    pub seconds: f64,
    pub turns_per_second: f64,
    /// Parley's user + system CPU over the measured turns, seconds, and per turn, µs.
    pub cpu_seconds: f64,
    pub cpu_us_per_turn: f64,
    /// The same by kind of thread (the thread's name without its number), µs a turn.
    pub threads_us_per_turn: BTreeMap<String, f64>,
    /// PostgreSQL's backends, µs a turn (absent on SQLite).
    pub postgres_us_per_turn: Option<f64>,
    pub ttft: Series,
    /// Answers stored complete with every token, and the rest, once the writer has caught up
    /// (over the whole run's database: the latency series' answers count too).
    pub stored_complete: i64,
    pub stored_other: i64,
}

/// Runs `args.cpu_turns` turns on the `bench` agent (zero-delay upstream) after a warm-up.
pub async fn closed_loop(
    client: &reqwest::Client,
    base: &str,
    args: &BenchArgs,
    parley_pid: u32,
    db: &parley_engine::store::Db,
) -> anyhow::Result<CpuResult> {
    let token = visitor_token(client, base, "bench").await?;
    let chat = format!("{base}/api/v1/chat");
    let concurrency = args.cpu_concurrency.max(1);
    run_turns(client, &chat, &token, (args.cpu_turns / 10).min(2_000).max(concurrency), concurrency).await;
    let postgres = args.database_url.is_some().then(|| super::probe::processes_named("postgres"));
    let pg_before = postgres.as_deref().map(cpu_seconds);
    let (before, total_before) = (threads_cpu_seconds(parley_pid), cpu_seconds(&[parley_pid]));
    let started = Instant::now();
    let (ttfts, errors) = run_turns(client, &chat, &token, args.cpu_turns, concurrency).await;
    let seconds = started.elapsed().as_secs_f64();
    let (after, total_after) = (threads_cpu_seconds(parley_pid), cpu_seconds(&[parley_pid]));
    let pg = postgres.as_deref().map(cpu_seconds).zip(pg_before).map(|(a, b)| a - b);
    let per_turn = |s: f64| s * 1e6 / args.cpu_turns.max(1) as f64;
    let mut threads = BTreeMap::new();
    for (name, cpu) in &after {
        let spent = cpu - before.get(name).copied().unwrap_or(0.0);
        *threads.entry(name.clone()).or_insert(0.0) += per_turn(spent);
    }
    // The process's own figure counts threads that ended during the run too.
    let cpu_seconds = total_after - total_before;
    let (stored_complete, stored_other) = stored_answers(db, args.tokens).await?;
    let result = CpuResult {
        turns: args.cpu_turns,
        concurrency,
        errors,
        seconds,
        turns_per_second: args.cpu_turns as f64 / seconds,
        cpu_seconds,
        cpu_us_per_turn: per_turn(cpu_seconds),
        threads_us_per_turn: threads,
        postgres_us_per_turn: pg.map(per_turn),
        ttft: series("cpu-ttft", ttfts, errors),
        stored_complete,
        stored_other,
    };
    print_cpu(&result);
    Ok(result)
}

/// `turns` turns by `concurrency` clients, each a new conversation: the times to first token
/// and the number of failed turns.
async fn run_turns(
    client: &reqwest::Client,
    chat: &str,
    token: &str,
    turns: usize,
    concurrency: usize,
) -> (Vec<Duration>, usize) {
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, chat, token, next) = (client.clone(), chat.to_owned(), token.to_owned(), next.clone());
            tokio::spawn(async move {
                let (mut ttfts, mut errors) = (Vec::new(), 0);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= turns {
                        break;
                    }
                    let request = client
                        .post(&chat)
                        .bearer_auth(&token)
                        .json(&json!({"agent": "bench", "message": format!("cpu {i}")}));
                    let started = Instant::now();
                    match request.send().await {
                        Ok(response) => match read_stream(response, started, &PARLEY).await {
                            Ok(times) => ttfts.push(times.first_token),
                            Err(_) => errors += 1,
                        },
                        Err(_) => errors += 1,
                    }
                }
                (ttfts, errors)
            })
        })
        .collect();
    let (mut ttfts, mut errors) = (Vec::with_capacity(turns), 0);
    for w in workers {
        match w.await {
            Ok((t, e)) => {
                ttfts.extend(t);
                errors += e;
            }
            Err(_) => errors += 1,
        }
    }
    (ttfts, errors)
}

fn print_cpu(r: &CpuResult) {
    println!(
        "\ncpu: {} turns at concurrency {} in {:.1} s ({:.0} turns/s), {} errors; TTFT p50 {:.1} ms p99 {:.1} ms; \
         Parley's CPU {:.2} s = {:.0} µs a turn",
        r.turns,
        r.concurrency,
        r.seconds,
        r.turns_per_second,
        r.errors,
        r.ttft.p50_us / 1e3,
        r.ttft.p99_us / 1e3,
        r.cpu_seconds,
        r.cpu_us_per_turn
    );
    let mut threads: Vec<_> = r.threads_us_per_turn.iter().filter(|(_, us)| **us >= 0.5).collect();
    threads.sort_by(|a, b| b.1.total_cmp(a.1));
    let parts: Vec<String> = threads.iter().map(|(name, us)| format!("{name} {us:.0}")).collect();
    println!("cpu by thread, µs a turn: {}", parts.join(", "));
    if let Some(pg) = r.postgres_us_per_turn {
        println!("PostgreSQL's backends: {pg:.0} µs a turn");
    }
    println!("stored: {} answers complete and whole, {} not", r.stored_complete, r.stored_other);
}
