//! `parley bench-replicas` (issue 46, goal 3): many streams at once through nginx to two (or
//! more) `parley serve` replicas on one PostgreSQL database, their model calls going to a
//! `parley fake-upstream` over h2c (HTTP/1.1 with `--http1-upstream`). It starts every process
//! itself and stops each by its PID at the end; runs the same burst directly against the upstream
//! first (the stream gap Parley's is compared with, in the same run), then through nginx; and
//! reports completed streams and errors, time to first token and stream gap, each replica's peak
//! memory and the streams it served, nginx's peak memory, the database's peak connections, and
//! whether every stored answer is complete and whole.
//!
//! `.ci/bench-replicas.sh` creates the database, raises the file-descriptor limit for the run and
//! calls this; the test suite runs it small (two replicas, 200 streams).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::json;
use tokio::process::{Child, Command};

mod figures;

use figures::print;
pub use figures::{BurstFigures, ReplicaBenchResult};

use super::nginx::{Nginx, nginx_config};
use super::probe::{Sampling, children_of, cpu_seconds, peak_rss, processes_named};
use super::streams::{OPENAI, PARLEY, many};
use super::{stored_answers, upstream_body, visitor_token, wait_ready};

/// Each replica's pooled connections plus the one that listens (`docs/deploy.md`).
pub const DB_CONNECTIONS_PER_REPLICA: i64 = 17;

/// Flags of `parley bench-replicas`.
#[derive(clap::Args, Clone, Debug)]
pub struct ReplicaBenchArgs {
    /// PostgreSQL URL of an empty database (`.ci/bench-replicas.sh` creates a fresh one).
    #[arg(long)]
    pub database_url: String,
    /// Streams started at once.
    #[arg(long, default_value_t = 10_000)]
    pub streams: usize,
    #[arg(long, default_value_t = 2)]
    pub replicas: usize,
    /// Tokens per answer.
    #[arg(long, default_value_t = 64)]
    pub tokens: usize,
    /// The upstream's spacing between tokens, milliseconds.
    #[arg(long, default_value_t = 250)]
    pub token_delay_ms: u64,
    /// nginx worker processes.
    #[arg(long, default_value_t = 2)]
    pub nginx_workers: usize,
    #[arg(long, default_value = "/usr/sbin/nginx")]
    pub nginx: PathBuf,
    /// The replicas reach the upstream over HTTP/1.1 (a connection per answer) instead of h2c.
    #[arg(long)]
    pub http1_upstream: bool,
    /// The first of the ports used: the upstream, nginx, then one per replica (0: free ports
    /// wherever they are).
    #[arg(long, default_value_t = 18380)]
    pub first_port: u16,
    /// No burst straight to the upstream first.
    #[arg(long)]
    pub no_direct: bool,
    /// Write every figure here as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// The processes of one run, stopped by PID when dropped (nginx first, through its master).
struct Processes {
    nginx: Option<Nginx>,
    children: Vec<Child>,
}

impl Drop for Processes {
    fn drop(&mut self) {
        self.nginx.take();
        for child in &mut self.children {
            let _ = child.start_kill();
        }
    }
}

/// `parley ARGS` with `envs`, its output to `log`.
fn parley(args: &[&str], envs: &[(&str, String)], log: &Path) -> anyhow::Result<Child> {
    let out = std::fs::File::create(log)?;
    let mut command = Command::new(std::env::current_exe().context("finding the parley binary")?);
    command.args(args).stdout(out.try_clone()?).stderr(out).kill_on_drop(true).env("RUST_LOG", "warn");
    for (k, v) in envs {
        command.env(k, v);
    }
    Ok(command.spawn()?)
}

/// `n` ports from `first` on, or (`first` = 0) `n` ports free now.
fn ports(first: u16, n: usize) -> anyhow::Result<Vec<u16>> {
    if first != 0 {
        return (0..n)
            .map(|i| u16::try_from(i).ok().and_then(|i| first.checked_add(i)).context("--first-port"))
            .collect();
    }
    // All bound at once, so that no two are the same, then let go for the processes to take.
    let held: Vec<std::net::TcpListener> =
        (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0")).collect::<Result<_, _>>()?;
    held.iter().map(|l| Ok(l.local_addr()?.port())).collect()
}

/// The sum of `parley_turns_started_total` in a replica's metrics.
async fn turns_started(client: &reqwest::Client, base: &str) -> u64 {
    let text = match client.get(format!("{base}/metrics")).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => return 0,
    };
    text.lines()
        .filter(|l| l.starts_with("parley_turns_started_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// Runs the benchmark and prints its report.
pub async fn run(args: ReplicaBenchArgs) -> anyhow::Result<()> {
    let result = measure(&args).await?;
    print(&result);
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&result)?)?;
    }
    Ok(())
}

/// Starts everything, runs both bursts, checks what was stored.
pub async fn measure(args: &ReplicaBenchArgs) -> anyhow::Result<ReplicaBenchResult> {
    if !args.database_url.starts_with("postgres") {
        bail!("--database-url: replicas share PostgreSQL (postgres://…/<an empty database>)");
    }
    if args.replicas == 0 || args.streams == 0 {
        bail!("--replicas and --streams must be at least 1");
    }
    let dir = tempfile::Builder::new().prefix("parley-bench-replicas").tempdir()?;
    let data = dir.path().display().to_string();
    let ports = ports(args.first_port, args.replicas + 2)?;
    let port = |i: usize| format!("127.0.0.1:{}", ports[i]);
    let upstream = port(0);
    let mut processes = Processes { nginx: None, children: Vec::new() };
    let tokens = args.tokens.to_string();
    let delay = args.token_delay_ms.to_string();
    eprintln!("bench-replicas: starting the upstream, {} replicas and nginx in {}", args.replicas, data);
    let upstream_child = parley(
        &["fake-upstream", "--listen", &upstream, "--tokens", &tokens, "--token-delay-ms", &delay],
        &[],
        &dir.path().join("upstream.log"),
    )?;
    let upstream_pid = upstream_child.id().context("upstream pid")?;
    processes.children.push(upstream_child);
    let mut env = vec![
        ("DATABASE_URL", args.database_url.clone()),
        ("PARLEY_DATA_DIR", data.clone()),
        ("PARLEY_PRIVATE_ENDPOINTS", upstream.clone()),
    ];
    let created = Command::new(std::env::current_exe()?)
        .args(["create-agent", "--key", "bench-replicas", "--name", "bench-replicas", "--provider", "openai"])
        .args(["--base-url", &format!("http://{upstream}/v1"), "--model", "fake-model"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .await?;
    if !created.status.success() {
        bail!("creating the bench agent: {}", String::from_utf8_lossy(&created.stderr));
    }
    if !args.http1_upstream {
        env.push(("PARLEY_H2C_ENDPOINTS", upstream.clone()));
    }
    // Throughput, not the public internet's limits: none, and no daily caps.
    for (k, v) in [
        ("LEPTOS_ENV", "PROD"),
        ("PARLEY_NO_LIMITS", "1"),
        ("PARLEY_AGENT_DAILY_CAP_USD", "0"),
        ("PARLEY_VISITOR_DAILY_CAP_USD", "0"),
        ("PARLEY_ADDRESS_DAILY_CAP_USD", "0"),
    ] {
        env.push((k, v.to_owned()));
    }
    let replicas: Vec<String> = (0..args.replicas).map(|i| port(2 + i)).collect();
    let mut replica_pids = Vec::new();
    for (i, addr) in replicas.iter().enumerate() {
        let mut env = env.clone();
        // Each replica's connections are told apart in `pg_stat_activity`.
        env.push(("DATABASE_URL", with_application_name(&args.database_url, &format!("parley-replica-{i}"))));
        let child = parley(&["serve", "--addr", addr], &env, &dir.path().join(format!("replica-{i}.log")))?;
        replica_pids.push(child.id().context("replica pid")?);
        processes.children.push(child);
    }
    for (i, addr) in replicas.iter().enumerate() {
        let log = dir.path().join(format!("replica-{i}.log"));
        wait_ready(&format!("http://{addr}/healthz"))
            .await
            .with_context(|| format!("replica {i}:\n{}", std::fs::read_to_string(&log).unwrap_or_default()))?;
    }
    wait_ready(&format!("http://{upstream}/v1/chat/completions")).await?;

    let nginx_dir = dir.path().join("nginx");
    std::fs::create_dir_all(&nginx_dir)?;
    let upstreams: Vec<&str> = replicas.iter().map(String::as_str).collect();
    let nginx_port = ports[1];
    // The kernel need not spread connections evenly over the workers: room for all in each.
    let per_worker = args.streams * 2 + 256;
    let conf = nginx_config(&nginx_dir, nginx_port, &upstreams, args.nginx_workers.max(1), per_worker);
    std::fs::write(nginx_dir.join("nginx.conf"), conf)?;
    let nginx = Nginx::start(&args.nginx, &nginx_dir, nginx_port)?;
    let nginx_pid = nginx.pid();
    processes.nginx = Some(nginx);
    let base = format!("http://127.0.0.1:{nginx_port}");
    wait_ready(&format!("{base}/healthz")).await?;

    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(args.streams)
        .timeout(Duration::from_secs(600))
        .build()?;
    // A burst lasts its answers' length and some; a stuck one fails here, named.
    let limit = Duration::from_millis(args.token_delay_ms * args.tokens as u64) * 2 + Duration::from_secs(120);
    let direct = if args.no_direct {
        None
    } else {
        eprintln!("bench-replicas: {} streams straight to the upstream", args.streams);
        let url = format!("http://{upstream}/v1/chat/completions");
        // A client of its own, dropped after: its idle connections would hold descriptors the
        // burst through nginx needs.
        let direct = reqwest::Client::builder().tcp_nodelay(true).timeout(Duration::from_secs(600)).build()?;
        let burst = many(args.streams, &OPENAI, |i| direct.post(&url).json(&upstream_body(&format!("s {i}"), false)));
        Some(BurstFigures::of(
            tokio::time::timeout(limit, burst).await.context("the direct burst did not end in time")?,
        ))
    };

    let token = visitor_token(&client, &base, "bench-replicas").await?;
    let db = parley_engine::store::Db::connect(&args.database_url).await?;
    let connections = db_connections_peak(db.clone(), args.replicas);
    let mut pids = replica_pids.clone();
    pids.push(nginx_pid);
    let workers = children_of(nginx_pid);
    pids.extend(&workers);
    let rss = peak_rss(pids);
    let mut roles: Vec<(String, Vec<u32>)> =
        replica_pids.iter().enumerate().map(|(i, pid)| (format!("replica {i}"), vec![*pid])).collect();
    roles.push(("nginx".into(), workers.clone()));
    roles.push(("upstream".into(), vec![upstream_pid]));
    roles.push(("load generator (this process)".into(), vec![std::process::id()]));
    roles.push(("PostgreSQL".into(), processes_named("postgres")));
    let cpu_before: Vec<f64> = roles.iter().map(|(_, pids)| cpu_seconds(pids)).collect();
    let chat = format!("{base}/api/v1/chat");
    eprintln!("bench-replicas: {} streams through nginx", args.streams);
    let burst = many(args.streams, &PARLEY, |i| {
        client
            .post(&chat)
            .bearer_auth(&token)
            .json(&json!({"agent": "bench-replicas", "message": format!("stream {i}")}))
    });
    let burst = tokio::time::timeout(limit, burst).await.context("the burst through nginx did not end in time")?;
    eprintln!("bench-replicas: checking what was stored");
    let cpu_seconds: Vec<(String, f64)> =
        roles.iter().zip(cpu_before).map(|((role, pids), before)| (role.clone(), cpu_seconds(pids) - before)).collect();
    let peaks = rss.stop().await;
    let (db_connections_peak, replica_db_connections_peak) = connections.stop().await;
    let parley = BurstFigures::of(burst);

    let mut replica_streams = Vec::new();
    for addr in &replicas {
        replica_streams.push(turns_started(&client, &format!("http://{addr}")).await);
    }
    let (stored_complete, stored_other) = stored_answers(&db, args.tokens).await?;
    let nginx_peak: Option<f64> = peaks[replicas.len()..].iter().flatten().copied().reduce(|a, b| a + b);
    let result = ReplicaBenchResult {
        streams: args.streams,
        replicas: args.replicas,
        tokens: args.tokens,
        token_delay_ms: args.token_delay_ms,
        upstream_protocol: if args.http1_upstream { "http1" } else { "h2c" },
        direct,
        parley,
        replica_rss_budget_mib: replica_streams.iter().map(|n| 64.0 + *n as f64 * 32.0 / 1024.0).collect(),
        replica_streams,
        replica_peak_rss_mib: peaks[..replicas.len()].to_vec(),
        nginx_peak_rss_mib: nginx_peak,
        db_connections_peak,
        replica_db_connections_peak,
        db_connections_documented: DB_CONNECTIONS_PER_REPLICA * args.replicas as i64,
        stored_complete,
        stored_other,
        cpu_seconds,
    };
    db.close().await;
    drop(processes);
    Ok(result)
}

/// `url` with `application_name` set (PostgreSQL shows it in `pg_stat_activity`).
fn with_application_name(url: &str, name: &str) -> String {
    let joint = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joint}application_name={name}")
}

/// Samples the replicas' connections to the database every 100 ms until stopped: the peak of
/// their sum, and each one's peak.
fn db_connections_peak(db: parley_engine::store::Db, replicas: usize) -> Sampling<(i64, Vec<i64>)> {
    let sample = move || {
        let db = db.clone();
        async move {
            sqlx::query_as::<_, (String, i64)>(
                "SELECT application_name, COUNT(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND application_name LIKE 'parley-replica-%' GROUP BY application_name",
            )
            .fetch_all(db.pool())
            .await
            .unwrap_or_default()
        }
    };
    Sampling::start(Duration::from_millis(100), (0, vec![0; replicas]), sample, |(total, each), rows| {
        *total = (*total).max(rows.iter().map(|(_, n)| n).sum());
        for (name, n) in rows {
            let i = name.trim_start_matches("parley-replica-").parse::<usize>().ok();
            if let Some(peak) = i.and_then(|i| each.get_mut(i)) {
                *peak = (*peak).max(n);
            }
        }
    })
}
