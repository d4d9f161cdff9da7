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
}

/// Starts `args.streams` answers at once on the `bench-streams` agent and reads them all.
pub async fn burst(client: &reqwest::Client, base: &str, args: &BenchArgs) -> anyhow::Result<StreamsResult> {
    let chat = format!("{base}/api/v1/chat");
    let visitor: Value = client
        .post(format!("{base}/api/v1/visitors"))
        .json(&json!({"agent": "bench-streams"}))
        .send()
        .await?
        .json()
        .await?;
    let token = Arc::new(visitor["token"].as_str().context("token")?.to_owned());
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
