//! `parley bench` end to end: its two fake upstreams and a real `parley serve` as children, and
//! the figures a run prints and writes. Only their shape is checked, never a time.

use std::net::TcpListener;

use serde_json::Value;

use crate::harness::{free_port, in_postgres_pass};

/// A free port whose next one is free too (the bench's second upstream listens there).
fn free_pair() -> u16 {
    loop {
        let port = free_port();
        if port < u16::MAX && TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

#[tokio::test]
async fn a_benchmark_run_reports_latency_and_the_bursts_figures() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let (upstream, parley) = (free_pair(), free_port());
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .args(["bench", "--requests", "4", "--warmup", "1", "--streams", "20", "--tokens", "5"])
        .args(["--stream-token-delay-ms", "5", "--after-burst-seconds", "1"])
        .args(["--cpu-turns", "40", "--cpu-concurrency", "4"])
        .args(["--upstream-port", &upstream.to_string(), "--parley-port", &parley.to_string()])
        .arg("--json")
        .arg(&json)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "warn")
        .kill_on_drop(true)
        .output()
        .await
        .expect("run parley bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "parley bench failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("20 started at once, 20 completed, 0 errors"), "{stdout}");
    assert!(stdout.contains("p99 of the pause before the first token"), "{stdout}");

    let figures: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let series = figures["series"].as_array().expect("series");
    let names: Vec<&str> = series.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["direct", "parley", "direct-tool", "parley-tool"], "{figures:#}");
    for s in series {
        assert_eq!((s["n"].as_u64(), s["errors"].as_u64()), (Some(4), Some(0)), "{s}");
    }
    let streams = &figures["streams"];
    assert_eq!((streams["completed"].as_u64(), streams["errors"].as_u64()), (Some(20), Some(0)), "{streams}");
    let ms = |key: &str| streams[key].as_f64().unwrap_or_else(|| panic!("{key} in {streams}"));
    // Each stream's longest pause is at least each of its parts, so the same holds for the p99s.
    for part in ["head_gap_p99_ms", "middle_gap_p99_ms", "tail_gap_p99_ms"] {
        assert!(ms(part) >= 0.0 && ms(part) <= ms("max_gap_p99_ms"), "{part}: {streams}");
    }
    assert!(ms("max_gap_p50_ms") <= ms("max_gap_p99_ms") && ms("max_gap_p99_ms") <= ms("max_gap_max_ms"), "{streams}");
    // Linux: the server's memory, read from /proc.
    assert!(ms("rss_before_mib") > 0.0 && ms("rss_peak_mib") > 0.0 && ms("rss_after_30s_mib") > 0.0, "{streams}");

    // The closed loop: every turn answered and stored whole (the series' and the burst's answers
    // too), and CPU time counted, by thread as well.
    let cpu = &figures["cpu"];
    assert_eq!(
        (cpu["turns"].as_u64(), cpu["errors"].as_u64(), cpu["ttft"]["n"].as_u64()),
        (Some(40), Some(0), Some(40)),
        "{cpu}"
    );
    assert_eq!(cpu["stored_other"].as_i64(), Some(0), "{cpu}");
    assert!(cpu["stored_complete"].as_i64().is_some_and(|n| n >= 40 + 20), "{cpu}");
    assert!(cpu["cpu_us_per_turn"].as_f64().is_some_and(|us| us > 0.0), "{cpu}");
    let threads = cpu["threads_us_per_turn"].as_object().expect("threads");
    assert!(threads.keys().any(|name| name.starts_with("tokio")), "{cpu}");
    assert!(stdout.contains("cpu: 40 turns at concurrency 4"), "{stdout}");
}

#[tokio::test]
async fn the_reports_benchmark_fills_builds_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("reports.json");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .args(["bench-reports", "--conversations", "3000", "--days", "10", "--rounds", "1"])
        .arg("--json")
        .arg(&json)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "warn")
        .kill_on_drop(true)
        .output()
        .await
        .expect("run parley bench-reports");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "parley bench-reports failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("filled 3000 conversations, 12600 messages"), "{stdout}");
    assert!(stdout.contains("roll-up built once for 3000 conversations"), "{stdout}");
    assert!(stdout.contains("report, all agents by day, 10 days: 3000 conversations"), "{stdout}");
    assert!(stdout.contains("report after 100 new conversations (catching up first): 3100 conversations"), "{stdout}");
    let figures: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(figures["all agents by day median ms"].as_f64().is_some(), "{figures}");
}

/// The replicas benchmark (issue 46, goal 3) in its small size, so that it cannot rot: two
/// replicas on a fresh PostgreSQL database behind a real nginx, 200 streams over h2c to the fake
/// upstream. Completion, errors, what was stored and the database's connections only; no time.
#[tokio::test]
async fn the_replicas_benchmark_completes_every_stream_through_nginx() {
    if !in_postgres_pass() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = crate::harness::fresh_database(dir.path()).await;
    let json = dir.path().join("replicas.json");
    // Its report and progress go to files, read back also when it does not end in time.
    let (report, progress) = (dir.path().join("report.log"), dir.path().join("progress.log"));
    let mut run = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .args(["bench-replicas", "--database-url", &url, "--streams", "200", "--replicas", "2"])
        .args(["--tokens", "8", "--token-delay-ms", "40", "--first-port", "0"])
        .arg("--json")
        .arg(&json)
        .env("RUST_LOG", "warn")
        .stdout(std::fs::File::create(&report).unwrap())
        .stderr(std::fs::File::create(&progress).unwrap())
        .kill_on_drop(true)
        .spawn()
        .expect("run parley bench-replicas");
    let ended = tokio::time::timeout(std::time::Duration::from_secs(150), run.wait()).await;
    let read = |path: &std::path::Path| std::fs::read_to_string(path).unwrap_or_default();
    let (stdout, stderr) = (read(&report), read(&progress));
    let Ok(status) = ended else {
        panic!("parley bench-replicas did not end in 150 s:\n{stdout}\n{stderr}");
    };
    assert!(status.expect("wait").success(), "parley bench-replicas failed:\n{stdout}\n{stderr}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let n = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("a number: {r:#}"));
    assert_eq!(r["upstream_protocol"], "h2c", "{r:#}");
    for burst in ["direct", "parley"] {
        assert_eq!((n(&r[burst]["completed"]), n(&r[burst]["errors"])), (200, 0), "{burst}: {r:#}");
    }
    // Every answer stored complete with every token, none left otherwise.
    assert_eq!((n(&r["stored_complete"]), n(&r["stored_other"])), (200, 0), "{r:#}");
    // nginx spread the streams over both replicas, which served them all between them.
    let served: Vec<u64> = r["replica_streams"].as_array().unwrap().iter().map(n).collect();
    assert_eq!(served.iter().sum::<u64>(), 200, "{r:#}");
    assert!(served.iter().all(|s| *s > 0), "{r:#}");
    assert!(n(&r["db_connections_peak"]) <= n(&r["db_connections_documented"]), "{r:#}");
    assert!(stdout.contains("stream gap p99:"), "{stdout}");
}
