//! `parley bench`: how much time Parley adds to a turn and how many streams it sustains, measured
//! in one run against a fake upstream with fixed delays. It starts `parley fake-upstream` and
//! `parley serve` as child processes (fresh SQLite database, an agent pointed at the fake) and
//! drives them over real HTTP from this process:
//!
//! 1. **direct**: time to first token calling the fake upstream directly;
//! 2. **parley**: the same through Parley (`POST /api/v1/chat`, first `token` event);
//! 3. **direct-tool** / **parley-tool**: a one-tool turn (the model asks for a tool, then answers),
//!    directly (two calls in a row) and through Parley (tool validated, run, stored);
//! 4. **streams**: N concurrent long streams through Parley; completed, errors, longest gap;
//! 5. **cpu**: a fixed number of turns in a closed loop against the zero-delay upstream, and
//!    Parley's CPU time a turn (`/proc`), every answer then checked stored whole.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

mod cpu;
pub mod crawl;
mod latency;
pub mod nginx;
mod probe;
pub mod replicas;
pub mod reports;
mod streams;

pub use latency::Series;
use latency::{all_series, print_report, quantile, series};

/// Flags of `parley bench`.
#[derive(clap::Args, Clone, Debug)]
pub struct BenchArgs {
    /// Requests per latency series (after the warm-up).
    #[arg(long, default_value_t = 300)]
    pub requests: usize,
    #[arg(long, default_value_t = 50)]
    pub warmup: usize,
    /// Concurrent streams in the stream test (0 skips it).
    #[arg(long, default_value_t = 2000)]
    pub streams: usize,
    /// Tokens per answer.
    #[arg(long, default_value_t = 64)]
    pub tokens: usize,
    /// Token spacing of the upstream in the stream test, in milliseconds.
    #[arg(long, default_value_t = 20)]
    pub stream_token_delay_ms: u64,
    /// Turns in the CPU test: a closed loop against the zero-delay upstream, Parley's CPU time
    /// over them read from `/proc` (0 skips it).
    #[arg(long, default_value_t = 20_000)]
    pub cpu_turns: usize,
    /// Clients of the CPU test, each sending its next message when its answer has ended.
    #[arg(long, default_value_t = 64)]
    pub cpu_concurrency: usize,
    /// Port of the fake upstream (the next one is used for the stream test's upstream).
    #[arg(long, default_value_t = 18180)]
    pub upstream_port: u16,
    /// Port of Parley.
    #[arg(long, default_value_t = 18190)]
    pub parley_port: u16,
    /// How long the memory is watched after the burst, in seconds.
    #[arg(long, default_value_t = 30)]
    pub after_burst_seconds: u64,
    /// Write every figure here as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Parley's database: a fresh SQLite file when absent, or this PostgreSQL URL (of an empty
    /// database) to measure what replicas run on.
    #[arg(long)]
    pub database_url: Option<String>,
}

/// An agent on the offline demo model with knowledge search, for the in-process benchmarks.
fn demo_agent(key: &str, name: &str) -> parley_engine::store::agents::NewAgent {
    use parley_engine::store::agents::{NewAgent, ProviderConfig, ProviderKind};
    NewAgent {
        public_key: key.into(),
        name: name.into(),
        vertical: "help_center".into(),
        capabilities: vec!["knowledge_search".into()],
        enabled_tools: None,
        provider: ProviderConfig {
            kind: ProviderKind::Demo,
            base_url: None,
            api_key: None,
            model: "demo".into(),
            fallback_model: None,
        },
        system_prompt: String::new(),
        greeting: String::new(),
        theme: Default::default(),
        language: Default::default(),
        placeholder: String::new(),
        starters: Vec::new(),
        prechat: Default::default(),
        allowed_origins: Vec::new(),
        domain: Default::default(),
    }
}

struct Children(Vec<Child>);

impl Drop for Children {
    /// Kills the children and waits (up to 10 s) until they are gone, so that a run right after
    /// this one finds its ports free (a killed server with thousands of sockets takes a moment).
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.start_kill();
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        for c in &mut self.0 {
            while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

async fn wait_ready(url: &str) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    for _ in 0..200 {
        if let Ok(r) = client.get(url).send().await
            && (r.status().is_success() || r.status().is_client_error())
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("{url} did not come up")
}

fn spawn_child(args: &[&str], envs: &[(&str, String)]) -> anyhow::Result<Child> {
    let exe = std::env::current_exe().context("finding the parley binary")?;
    let mut cmd = Command::new(exe);
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null()).kill_on_drop(true);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.env("RUST_LOG", "warn");
    Ok(cmd.spawn()?)
}

/// A new visitor's token for `agent` on the server at `base`.
async fn visitor_token(client: &reqwest::Client, base: &str, agent: &str) -> anyhow::Result<String> {
    let visitor: Value =
        client.post(format!("{base}/api/v1/visitors")).json(&json!({ "agent": agent })).send().await?.json().await?;
    Ok(visitor["token"].as_str().context("visitor token")?.to_owned())
}

/// Stored answers once the writers have caught up: those complete with every token of the fake
/// upstream's answer, and the rest (none expected).
pub(super) async fn stored_answers(db: &parley_engine::store::Db, tokens: usize) -> anyhow::Result<(i64, i64)> {
    let whole: String = (0..tokens).map(|i| format!("tok{i} ")).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT status, CASE WHEN content = $1 THEN 'whole' ELSE 'part' END, COUNT(*) FROM messages \
             WHERE role = 'assistant' GROUP BY 1, 2",
        )
        .bind(&whole)
        .fetch_all(db.pool())
        .await?;
        let complete = rows.iter().filter(|(s, w, _)| s == "complete" && w == "whole").map(|(_, _, n)| *n).sum::<i64>();
        let other = rows.iter().map(|(_, _, n)| *n).sum::<i64>() - complete;
        // An answer still being written is `streaming` until the writer's last batch lands.
        if other == 0 || Instant::now() > deadline {
            return Ok((complete, other));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn upstream_body(message: &str, tools: bool) -> Value {
    let mut body = json!({"model": "fake-model", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": message}]});
    if tools {
        body["tools"] = json!([{"type": "function", "function": {"name": "escalate_to_human", "description": "d",
            "parameters": {"type": "object", "properties": {}}}}]);
    }
    body
}

/// The bench's processes: two fake upstreams (fast; slow, for the burst), the agents, Parley.
struct Running {
    children: Children,
    parley: SocketAddr,
    upstream: SocketAddr,
    parley_pid: Option<u32>,
}

/// Starts the fake upstreams, creates the bench agents and starts Parley, each ready.
async fn start(args: &BenchArgs, data: &str) -> anyhow::Result<Running> {
    let upstream: SocketAddr = ([127, 0, 0, 1], args.upstream_port).into();
    let slow_upstream: SocketAddr = ([127, 0, 0, 1], args.upstream_port + 1).into();
    let parley: SocketAddr = ([127, 0, 0, 1], args.parley_port).into();
    let tokens = args.tokens.to_string();
    let mut children = Children(Vec::new());
    children.0.push(spawn_child(
        &["fake-upstream", "--listen", &upstream.to_string(), "--tokens", &tokens, "--tool", "escalate_to_human={}"],
        &[],
    )?);
    let delay = args.stream_token_delay_ms.to_string();
    children.0.push(spawn_child(
        &["fake-upstream", "--listen", &slow_upstream.to_string(), "--tokens", &tokens, "--token-delay-ms", &delay],
        &[],
    )?);
    // The same database for the agents and the server: the one asked for, else SQLite in `dir`.
    let database = |cmd: &mut Command| {
        match &args.database_url {
            Some(url) => cmd.env("DATABASE_URL", url),
            None => cmd.env_remove("DATABASE_URL"),
        };
    };
    // The fake upstreams on loopback are the only private destinations (the outbound fence).
    let private = format!("{upstream},{slow_upstream}");
    for (key, base) in [("bench", upstream), ("bench-streams", slow_upstream)] {
        let mut create = Command::new(std::env::current_exe()?);
        database(&mut create);
        let status = create
            .args([
                "create-agent",
                "--key",
                key,
                "--name",
                key,
                "--capabilities",
                "ticket_escalation",
                "--provider",
                "openai",
            ])
            .args(["--base-url", &format!("http://{base}/v1"), "--model", "fake-model"])
            .env("PARLEY_DATA_DIR", data)
            .env("PARLEY_PRIVATE_ENDPOINTS", &private)
            .stdout(Stdio::null())
            .status()
            .await?;
        if !status.success() {
            bail!("could not create the bench agent");
        }
    }
    children.0.push(spawn_child(
        &["serve", "--addr", &parley.to_string()],
        // The benchmark measures the server's own time: no rate limits, and no daily caps (one
        // visitor sends every request to an unpriced `fake-model`, charged the default price).
        &[
            ("PARLEY_DATA_DIR", data.to_owned()),
            ("PARLEY_PRIVATE_ENDPOINTS", private),
            ("LEPTOS_ENV", "PROD".into()),
            ("PARLEY_NO_LIMITS", "1".into()),
            ("PARLEY_AGENT_DAILY_CAP_USD", "0".into()),
            ("PARLEY_VISITOR_DAILY_CAP_USD", "0".into()),
            ("PARLEY_ADDRESS_DAILY_CAP_USD", "0".into()),
            (
                "DATABASE_URL",
                args.database_url.clone().unwrap_or_else(|| format!("sqlite://{data}/parley.db?mode=rwc")),
            ),
        ],
    )?);
    let parley_pid = children.0.last().and_then(|c| c.id());
    wait_ready(&format!("http://{parley}/healthz")).await?;
    wait_ready(&format!("http://{upstream}/v1/chat/completions")).await?;
    wait_ready(&format!("http://{slow_upstream}/v1/chat/completions")).await?;

    Ok(Running { children, parley, upstream, parley_pid })
}

/// Runs the benchmark and prints a report.
pub async fn run(args: BenchArgs) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("parley-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let data = dir.display().to_string();
    let Running { children, parley, upstream, parley_pid } = start(&args, &data).await?;

    let client = reqwest::Client::builder().tcp_nodelay(true).pool_max_idle_per_host(4096).build()?;
    let base = format!("http://{parley}");
    let token = visitor_token(&client, &base, "bench").await?;
    let chat = format!("{base}/api/v1/chat");
    let direct_url = format!("http://{upstream}/v1/chat/completions");

    println!(
        "parley bench: {} requests per series after {} warm-up, {} tokens per answer, Parley on {}",
        args.requests,
        args.warmup,
        args.tokens,
        if args.database_url.is_some() { "PostgreSQL" } else { "SQLite" }
    );
    let report = all_series(&args, &client, &chat, &token, &direct_url).await.to_vec();
    print_report(&report);

    let streams_result = match args.streams {
        0 => None,
        _ => Some(streams::burst(&client, &base, &args, parley_pid).await?),
    };
    let cpu_result = match (args.cpu_turns, parley_pid) {
        (0, _) | (_, None) => None,
        (_, Some(pid)) => {
            let url = args.database_url.clone().unwrap_or_else(|| format!("sqlite://{data}/parley.db"));
            let db = parley_engine::store::Db::connect(&url).await?;
            Some(cpu::closed_loop(&client, &base, &args, pid, &db).await?)
        }
    };
    if let Some(path) = &args.json {
        let out = json!({"series": report, "streams": streams_result, "cpu": cpu_result, "tokens": args.tokens});
        std::fs::write(path, serde_json::to_vec_pretty(&out)?)?;
    }
    drop(children);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
