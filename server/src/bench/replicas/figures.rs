//! What `parley bench-replicas` reports: a burst's figures, the run's, and their printout.

use std::time::Duration;

use crate::bench::quantile;
use crate::bench::streams::Burst;

/// One burst's figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BurstFigures {
    pub completed: usize,
    pub errors: usize,
    /// The first few errors, as read.
    pub error_samples: Vec<String>,
    pub seconds: f64,
    pub ttft_p50_ms: f64,
    pub ttft_p99_ms: f64,
    /// The longest pause from each stream's first token on: p50, p99, max over the streams.
    pub stream_gap_p50_ms: f64,
    pub stream_gap_p99_ms: f64,
    pub stream_gap_max_ms: f64,
}

impl BurstFigures {
    pub(super) fn of(burst: Burst) -> BurstFigures {
        let mut ttfts: Vec<Duration> = burst.times.iter().map(|t| t.first_token).collect();
        let mut gaps: Vec<Duration> = burst.times.iter().map(|t| t.stream_gap()).collect();
        ttfts.sort();
        gaps.sort();
        let ms = |v: &[Duration], q: f64| quantile(v, q) * 1e3;
        BurstFigures {
            completed: burst.times.len(),
            errors: burst.errors.len(),
            error_samples: burst.errors.iter().take(5).cloned().collect(),
            seconds: burst.seconds,
            ttft_p50_ms: ms(&ttfts, 0.5),
            ttft_p99_ms: ms(&ttfts, 0.99),
            stream_gap_p50_ms: ms(&gaps, 0.5),
            stream_gap_p99_ms: ms(&gaps, 0.99),
            stream_gap_max_ms: ms(&gaps, 1.0),
        }
    }
}

/// What `parley bench-replicas` measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReplicaBenchResult {
    pub streams: usize,
    pub replicas: usize,
    pub tokens: usize,
    pub token_delay_ms: u64,
    /// `h2c` or `http1`.
    pub upstream_protocol: &'static str,
    pub direct: Option<BurstFigures>,
    pub parley: BurstFigures,
    /// Per replica: streams it served (`parley_turns_started_total`), peak RSS in MiB, and its
    /// budget `64 MiB + 32 KiB × streams served`.
    pub replica_streams: Vec<u64>,
    pub replica_peak_rss_mib: Vec<Option<f64>>,
    pub replica_rss_budget_mib: Vec<f64>,
    /// nginx's master and workers together at their peaks, MiB.
    pub nginx_peak_rss_mib: Option<f64>,
    /// The most connections the replicas held to the database at once (together, and each:
    /// every replica connects as `application_name` `parley-replica-N`), and the documented most
    /// (`17 × replicas`).
    pub db_connections_peak: i64,
    pub replica_db_connections_peak: Vec<i64>,
    pub db_connections_documented: i64,
    /// Stored answers: complete and whole (every token), and any other.
    pub stored_complete: i64,
    pub stored_other: i64,
    /// CPU time each part used during the burst through nginx (user + system, seconds): what
    /// the two cores went to.
    pub cpu_seconds: Vec<(String, f64)>,
}

pub(super) fn print(r: &ReplicaBenchResult) {
    println!(
        "\nparley bench-replicas: {} streams at once, {} replicas on PostgreSQL behind nginx, upstream over {}, \
         {} tokens {} ms apart",
        r.streams, r.replicas, r.upstream_protocol, r.tokens, r.token_delay_ms
    );
    let line = |name: &str, b: &BurstFigures| {
        println!(
            "{name:<8} {}/{} completed, {} errors in {:.1} s; TTFT p50 {:.0} ms p99 {:.0} ms; stream gap p50 {:.0} ms \
             p99 {:.0} ms max {:.0} ms{}",
            b.completed,
            r.streams,
            b.errors,
            b.seconds,
            b.ttft_p50_ms,
            b.ttft_p99_ms,
            b.stream_gap_p50_ms,
            b.stream_gap_p99_ms,
            b.stream_gap_max_ms,
            b.error_samples.first().map(|e| format!(" (first error: {e})")).unwrap_or_default()
        );
    };
    if let Some(direct) = &r.direct {
        line("direct", direct);
    }
    line("parley", &r.parley);
    if let Some(direct) = &r.direct {
        println!("stream gap p99: {:.2}× the direct upstream's", r.parley.stream_gap_p99_ms / direct.stream_gap_p99_ms);
    }
    for (i, ((served, peak), budget)) in
        r.replica_streams.iter().zip(&r.replica_peak_rss_mib).zip(&r.replica_rss_budget_mib).enumerate()
    {
        let peak = peak.map_or("?".to_owned(), |p| format!("{p:.0}"));
        println!("replica {i}: {served} streams served, peak RSS {peak} MiB (budget {budget:.0} MiB)");
    }
    if let Some(nginx) = r.nginx_peak_rss_mib {
        println!("nginx: peak RSS {nginx:.0} MiB (master and workers)");
    }
    let cpu: Vec<String> = r.cpu_seconds.iter().map(|(role, s)| format!("{role} {s:.1} s")).collect();
    println!("CPU during the burst through nginx: {}", cpu.join(", "));
    println!(
        "database: peak {} connections from the replicas (each: {:?}; documented most {}); stored answers: {} \
         complete and whole, {} other",
        r.db_connections_peak,
        r.replica_db_connections_peak,
        r.db_connections_documented,
        r.stored_complete,
        r.stored_other
    );
}
