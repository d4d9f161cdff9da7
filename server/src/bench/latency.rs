//! The latency part of `parley bench`: series of single requests at concurrency 1 (the upstream
//! directly and through Parley, without and with one tool hop), their percentiles and report.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::StreamExt;
use serde_json::json;

use super::{BenchArgs, upstream_body};

/// Percentiles of a series, in microseconds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Series {
    pub name: String,
    pub n: usize,
    pub errors: usize,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
}

/// The `q` quantile of `sorted` in seconds (NaN when empty).
pub(super) fn quantile(sorted: &[Duration], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n => sorted[((n as f64 - 1.0) * q).round() as usize].as_secs_f64(),
    }
}

pub(super) fn series(name: &str, mut samples: Vec<Duration>, errors: usize) -> Series {
    samples.sort();
    let pick = |q: f64| quantile(&samples, q) * 1e6;
    Series { name: name.into(), n: samples.len(), errors, p50_us: pick(0.5), p90_us: pick(0.9), p99_us: pick(0.99) }
}

/// Time from `started` to the first body chunk that contains `marker`; the body is read to its end.
async fn ttft(request: reqwest::RequestBuilder, marker: &str, started: Instant) -> anyhow::Result<Duration> {
    let response = request.send().await?;
    if !response.status().is_success() {
        bail!("status {}", response.status());
    }
    let mut body = response.bytes_stream();
    let mut first = None;
    let mut seen = String::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        if first.is_none() {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains(marker) {
                first = Some(started.elapsed());
            } else if seen.len() > 4096 {
                seen.drain(..seen.len() - 256);
            }
        }
    }
    first.context("no first token")
}

async fn run_series<F, Fut>(name: &str, warmup: usize, requests: usize, mut one: F) -> Series
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Duration>>,
{
    for i in 0..warmup {
        let _ = one(i).await;
    }
    let mut samples = Vec::with_capacity(requests);
    let mut errors = 0;
    for i in 0..requests {
        match one(warmup + i).await {
            Ok(d) => samples.push(d),
            Err(_) => errors += 1,
        }
    }
    series(name, samples, errors)
}

/// The four series at concurrency 1: the upstream directly and through Parley, without and with
/// one tool hop.
pub(super) async fn all_series(
    args: &BenchArgs,
    client: &reqwest::Client,
    chat: &str,
    token: &str,
    direct_url: &str,
) -> [Series; 4] {
    let direct = run_series("direct", args.warmup, args.requests, |i| {
        ttft(
            client.post(direct_url).json(&upstream_body(&format!("hello {i}"), false)),
            "\"content\":\"tok",
            Instant::now(),
        )
    })
    .await;
    let product = run_series("parley", args.warmup, args.requests, |i| {
        ttft(
            client.post(chat).bearer_auth(token).json(&json!({"agent": "bench", "message": format!("hello {i}")})),
            "event: token",
            Instant::now(),
        )
    })
    .await;
    let direct_tool = run_series("direct-tool", args.warmup, args.requests, |i| {
        let client = client.clone();
        let url = direct_url.to_owned();
        async move {
            let started = Instant::now();
            // Call 1: the model asks for the tool; read it to the end.
            let first = client.post(&url).json(&upstream_body(&format!("[[tool]] {i}"), true)).send().await?;
            let _ = first.bytes().await?;
            // Call 2: the answer after the tool result.
            let mut body = upstream_body(&format!("[[tool]] {i}"), true);
            body["messages"]
                .as_array_mut()
                .context("messages")?
                .push(json!({"role": "tool", "tool_call_id": "c", "content": "{}"}));
            ttft(client.post(&url).json(&body), "\"content\":\"tok", started).await
        }
    })
    .await;
    let product_tool = run_series("parley-tool", args.warmup, args.requests, |i| {
        ttft(
            client.post(chat).bearer_auth(token).json(&json!({"agent": "bench", "message": format!("[[tool]] {i}")})),
            "event: token",
            Instant::now(),
        )
    })
    .await;

    [direct, product, direct_tool, product_tool]
}

/// The table and the added time to first token.
pub(super) fn print_report(report: &[Series]) {
    let [direct, product, direct_tool, product_tool] = report else { return };
    println!("\n{:<12} {:>6} {:>6} {:>10} {:>10} {:>10}", "series", "n", "errors", "p50 µs", "p90 µs", "p99 µs");
    for s in report {
        println!("{:<12} {:>6} {:>6} {:>10.0} {:>10.0} {:>10.0}", s.name, s.n, s.errors, s.p50_us, s.p90_us, s.p99_us);
    }
    println!(
        "\nadded TTFT, no tool:  p50 {:+.0} µs   p99 {:+.0} µs",
        product.p50_us - direct.p50_us,
        product.p99_us - direct.p99_us
    );
    println!(
        "added TTFT, one tool: p50 {:+.0} µs   p99 {:+.0} µs   (vs. the same two upstream calls made directly)",
        product_tool.p50_us - direct_tool.p50_us,
        product_tool.p99_us - direct_tool.p99_us
    );
}
