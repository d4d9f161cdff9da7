//! The burst part of `parley bench`: many long streams started at once through Parley.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::StreamExt;
use serde_json::{Value, json};

use super::{BenchArgs, Series, series};

/// Result of the concurrent stream test.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StreamsResult {
    pub streams: usize,
    pub completed: usize,
    pub errors: usize,
    pub ttft: Series,
    pub max_gap_p50_ms: f64,
    pub max_gap_p99_ms: f64,
    pub max_gap_max_ms: f64,
    pub seconds: f64,
    /// Parley's resident memory before the burst, at its peak during it, and 30 s after it, MiB
    /// (from `/proc`; absent elsewhere).
    pub rss_before_mib: Option<f64>,
    pub rss_peak_mib: Option<f64>,
    pub rss_after_30s_mib: Option<f64>,
    /// Seconds after the burst until the memory was back under 96 MiB (absent: not within 30 s).
    pub rss_under_96_mib_after_s: Option<f64>,
}

/// Resident memory of process `pid` in MiB (Linux `/proc`).
fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 =
        status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// Starts `args.streams` answers at once on the `bench-streams` agent and reads them all.
pub async fn burst(
    client: &reqwest::Client,
    base: &str,
    args: &BenchArgs,
    parley_pid: Option<u32>,
) -> anyhow::Result<StreamsResult> {
    let chat = format!("{base}/api/v1/chat");
    let visitor: Value = client
        .post(format!("{base}/api/v1/visitors"))
        .json(&json!({"agent": "bench-streams"}))
        .send()
        .await?
        .json()
        .await?;
    let token = Arc::new(visitor["token"].as_str().context("token")?.to_owned());
    let rss_before = parley_pid.and_then(rss_mib);
    // Memory sampled every 20 ms while the burst runs.
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        tokio::spawn(async move {
            let mut peak: Option<f64> = None;
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(now) = parley_pid.and_then(rss_mib) {
                    peak = Some(peak.map_or(now, |p: f64| p.max(now)));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            peak
        })
    };
    let started = Instant::now();
    let tasks: Vec<_> = (0..args.streams)
        .map(|n| {
            let client = client.clone();
            let token = token.clone();
            let url = chat.clone();
            tokio::spawn(async move {
                let started = Instant::now();
                let response = client
                    .post(&url)
                    .bearer_auth(token.as_str())
                    .json(&json!({"agent": "bench-streams", "message": format!("stream {n}")}))
                    .send()
                    .await?;
                read_stream(response, started).await
            })
        })
        .collect();
    let mut ttfts = Vec::new();
    let mut gaps = Vec::new();
    let mut errors = 0;
    for t in tasks {
        match t.await {
            Ok(Ok((first, gap))) => {
                ttfts.push(first);
                gaps.push(gap);
            }
            _ => errors += 1,
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let rss_peak = sampler.await.ok().flatten();
    // How soon the memory is given back.
    let mut under_96 = None;
    let mut after = None;
    if let Some(pid) = parley_pid {
        let ended = Instant::now();
        while ended.elapsed() < Duration::from_secs(30) {
            let now = rss_mib(pid);
            if under_96.is_none() && now.is_some_and(|m| m < 96.0) {
                under_96 = Some(ended.elapsed().as_secs_f64());
            }
            after = now;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    gaps.sort();
    let gap_at = |q: f64| {
        if gaps.is_empty() {
            f64::NAN
        } else {
            gaps[((gaps.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e3
        }
    };
    let result = StreamsResult {
        streams: args.streams,
        completed: ttfts.len(),
        errors,
        max_gap_p50_ms: gap_at(0.5),
        max_gap_p99_ms: gap_at(0.99),
        max_gap_max_ms: gap_at(1.0),
        ttft: series("streams-ttft", ttfts, errors),
        seconds,
        rss_before_mib: rss_before,
        rss_peak_mib: rss_peak,
        rss_after_30s_mib: after,
        rss_under_96_mib_after_s: under_96,
    };
    println!(
        "\nstreams: {} started at once, {} completed, {} errors in {:.1} s; TTFT p50 {:.1} ms p99 {:.1} ms; \
         longest gap between events per stream: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (upstream spacing {} ms)",
        result.streams,
        result.completed,
        result.errors,
        result.seconds,
        result.ttft.p50_us / 1e3,
        result.ttft.p99_us / 1e3,
        result.max_gap_p50_ms,
        result.max_gap_p99_ms,
        result.max_gap_max_ms,
        args.stream_token_delay_ms
    );
    if let (Some(before), Some(peak), Some(after)) =
        (result.rss_before_mib, result.rss_peak_mib, result.rss_after_30s_mib)
    {
        let back = match result.rss_under_96_mib_after_s {
            Some(s) => format!("under 96 MiB {s:.1} s after the burst"),
            None => "not under 96 MiB within 30 s".into(),
        };
        println!(
            "memory: {before:.0} MiB before, peak {peak:.0} MiB during the burst ({:.1} KiB per stream over before), \
             {after:.0} MiB 30 s after; {back}",
            (peak - before) * 1024.0 / result.streams.max(1) as f64
        );
    }
    Ok(result)
}

async fn read_stream(response: reqwest::Response, started: Instant) -> anyhow::Result<(Duration, Duration)> {
    if !response.status().is_success() {
        bail!("status {}", response.status());
    }
    let mut body = response.bytes_stream();
    let mut first = None;
    let mut last = Instant::now();
    let mut max_gap = Duration::ZERO;
    let mut completed = false;
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        let now = Instant::now();
        let text = String::from_utf8_lossy(&chunk);
        match first {
            None if text.contains("event: token") => {
                first = Some(started.elapsed());
                last = now;
            }
            Some(_) => {
                max_gap = max_gap.max(now - last);
                last = now;
            }
            None => {}
        }
        if text.contains("event: message_end") && text.contains("\"complete\"") {
            completed = true;
        }
    }
    if !completed {
        bail!("stream did not complete");
    }
    Ok((first.context("no token")?, max_gap))
}
