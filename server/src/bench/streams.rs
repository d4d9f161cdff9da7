//! The burst part of `parley bench`: many long streams started at once through Parley.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::StreamExt;
use serde_json::json;

use super::probe::{peak_rss, rss_mib};
use super::{BenchArgs, Series, quantile, series, visitor_token};

/// Result of the concurrent stream test.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StreamsResult {
    pub streams: usize,
    pub completed: usize,
    pub errors: usize,
    pub ttft: Series,
    /// Each stream's longest pause between two writes, counted from its first event (as the
    /// side-by-side harness's load generator counts it): p50, p99 and max over the streams.
    pub max_gap_p50_ms: f64,
    pub max_gap_p99_ms: f64,
    pub max_gap_max_ms: f64,
    /// Where those pauses are, p99 over the streams: the pause before the first token (after
    /// `message_start`: the model call's start), the longest one between the first token and the
    /// end, and the one before `message_end` (the answer's last batch being stored).
    pub head_gap_p99_ms: f64,
    pub middle_gap_p99_ms: f64,
    pub tail_gap_p99_ms: f64,
    pub seconds: f64,
    /// Parley's resident memory before the burst, at its peak during it, and 30 s after it (or
    /// `--after-burst-seconds`), MiB (from `/proc`; absent elsewhere).
    pub rss_before_mib: Option<f64>,
    pub rss_peak_mib: Option<f64>,
    pub rss_after_30s_mib: Option<f64>,
    /// Seconds after the burst until the memory was back under 96 MiB (absent: not while watched).
    pub rss_under_96_mib_after_s: Option<f64>,
}

/// Starts `args.streams` answers at once on the `bench-streams` agent and reads them all.
pub async fn burst(
    client: &reqwest::Client,
    base: &str,
    args: &BenchArgs,
    parley_pid: Option<u32>,
) -> anyhow::Result<StreamsResult> {
    let chat = format!("{base}/api/v1/chat");
    let token = visitor_token(client, base, "bench-streams").await?;
    let rss_before = parley_pid.and_then(rss_mib);
    let sampler = peak_rss(parley_pid.into_iter().collect());
    let burst = many(args.streams, &PARLEY, |n| {
        client
            .post(&chat)
            .bearer_auth(&token)
            .json(&json!({"agent": "bench-streams", "message": format!("stream {n}")}))
    })
    .await;
    let errors = burst.errors.len();
    let mut ttfts = Vec::new();
    let (mut gaps, mut heads, mut middles, mut tails) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for times in burst.times {
        ttfts.push(times.first_token);
        gaps.push(times.max_gap);
        heads.push(times.head);
        middles.push(times.middle);
        tails.push(times.tail);
    }
    let seconds = burst.seconds;
    let rss_peak = sampler.stop().await.first().copied().flatten();
    // How soon the memory is given back.
    let (under_96, after) = memory_after(parley_pid, args.after_burst_seconds).await;
    for v in [&mut gaps, &mut heads, &mut middles, &mut tails] {
        v.sort();
    }
    let ms = |v: &[Duration], q: f64| quantile(v, q) * 1e3;
    let result = StreamsResult {
        streams: args.streams,
        completed: ttfts.len(),
        errors,
        max_gap_p50_ms: ms(&gaps, 0.5),
        max_gap_p99_ms: ms(&gaps, 0.99),
        max_gap_max_ms: ms(&gaps, 1.0),
        head_gap_p99_ms: ms(&heads, 0.99),
        middle_gap_p99_ms: ms(&middles, 0.99),
        tail_gap_p99_ms: ms(&tails, 0.99),
        ttft: series("streams-ttft", ttfts, errors),
        seconds,
        rss_before_mib: rss_before,
        rss_peak_mib: rss_peak,
        rss_after_30s_mib: after,
        rss_under_96_mib_after_s: under_96,
    };
    print_streams(&result, args);
    Ok(result)
}

/// After a burst: how many seconds until the process is under 96 MiB (if it gets there within
/// `seconds`), and its memory at the end of them.
async fn memory_after(parley_pid: Option<u32>, seconds: u64) -> (Option<f64>, Option<f64>) {
    let mut under_96 = None;
    let mut after = None;
    if let Some(pid) = parley_pid {
        let ended = Instant::now();
        while ended.elapsed() < Duration::from_secs(seconds) {
            let now = rss_mib(pid);
            if under_96.is_none() && now.is_some_and(|m| m < 96.0) {
                under_96 = Some(ended.elapsed().as_secs_f64());
            }
            after = now;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    (under_96, after)
}

/// The burst's report.
fn print_streams(result: &StreamsResult, args: &BenchArgs) {
    println!(
        "\nstreams: {} started at once, {} completed, {} errors in {:.1} s; TTFT p50 {:.1} ms p99 {:.1} ms; \
         longest gap between events per stream: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (upstream spacing {} ms); \
         p99 of the pause before the first token {:.1} ms, between tokens {:.1} ms, before message_end {:.1} ms",
        result.streams,
        result.completed,
        result.errors,
        result.seconds,
        result.ttft.p50_us / 1e3,
        result.ttft.p99_us / 1e3,
        result.max_gap_p50_ms,
        result.max_gap_p99_ms,
        result.max_gap_max_ms,
        args.stream_token_delay_ms,
        result.head_gap_p99_ms,
        result.middle_gap_p99_ms,
        result.tail_gap_p99_ms,
    );
    if let (Some(before), Some(peak), Some(after)) =
        (result.rss_before_mib, result.rss_peak_mib, result.rss_after_30s_mib)
    {
        let back = match result.rss_under_96_mib_after_s {
            Some(s) => format!("under 96 MiB {s:.1} s after the burst"),
            None => format!("not under 96 MiB within {} s", args.after_burst_seconds),
        };
        println!(
            "memory: {before:.0} MiB before, peak {peak:.0} MiB during the burst ({:.1} KiB per stream over before), \
             {after:.0} MiB {} s after; {back}",
            (peak - before) * 1024.0 / result.streams.max(1) as f64,
            args.after_burst_seconds
        );
    }
}

/// How a stream's events read: its first token, its end, and the end's mark of completion.
pub(super) struct Markers {
    token: &'static str,
    end: &'static str,
    complete: &'static str,
}

/// Parley's event stream.
pub(super) const PARLEY: Markers =
    Markers { token: "event: token", end: "event: message_end", complete: "\"complete\"" };

/// An OpenAI-compatible upstream's stream (the fake's tokens begin `tok`).
pub(super) const OPENAI: Markers =
    Markers { token: "\"content\":\"tok", end: "data: [DONE]", complete: "data: [DONE]" };

/// What a burst of streams gave: each completed stream's times, each failed one's reason.
pub(super) struct Burst {
    pub times: Vec<StreamTimes>,
    pub errors: Vec<String>,
    pub seconds: f64,
}

/// Starts `n` streams at once (`request(i)` each) and reads them all to their end.
pub(super) async fn many(
    n: usize,
    markers: &'static Markers,
    request: impl Fn(usize) -> reqwest::RequestBuilder,
) -> Burst {
    let started = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let request = request(i);
            tokio::spawn(async move {
                let started = Instant::now();
                read_stream(request.send().await?, started, markers).await
            })
        })
        .collect();
    let (mut times, mut errors) = (Vec::with_capacity(n), Vec::new());
    for t in tasks {
        match t.await {
            Ok(Ok(t)) => times.push(t),
            Ok(Err(e)) => errors.push(format!("{e:#}")),
            Err(e) => errors.push(e.to_string()),
        }
    }
    Burst { times, errors, seconds: started.elapsed().as_secs_f64() }
}

/// What one stream showed: when its first token came, and its longest pauses.
pub(super) struct StreamTimes {
    pub first_token: Duration,
    /// Longest pause between two writes anywhere in the stream (as the side-by-side harness
    /// counts it: from the first event, `message_start`, on).
    pub max_gap: Duration,
    /// The pause before the first token, after `message_start` (the model call's start).
    pub head: Duration,
    /// Longest pause between writes after the first token, before the end.
    pub middle: Duration,
    /// From the write before `message_end` to `message_end` (the answer's last batch stored).
    pub tail: Duration,
}

impl StreamTimes {
    /// The longest pause from the first token on (the side-by-side load generator's *stream
    /// gap*): what a reader waits while the answer streams.
    pub fn stream_gap(&self) -> Duration {
        self.middle.max(self.tail)
    }
}

pub(super) async fn read_stream(
    response: reqwest::Response,
    started: Instant,
    markers: &Markers,
) -> anyhow::Result<StreamTimes> {
    if !response.status().is_success() {
        bail!("status {}", response.status());
    }
    let mut body = response.bytes_stream();
    let mut seen_any = false;
    let mut first_token = None;
    let mut last = Instant::now();
    let (mut max_gap, mut head, mut middle, mut tail) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut completed = false;
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        let now = Instant::now();
        let text = String::from_utf8_lossy(&chunk);
        let gap = now - last;
        let seen_before = std::mem::replace(&mut seen_any, true);
        if seen_before {
            max_gap = max_gap.max(gap);
        }
        let ends = text.contains(markers.end);
        match first_token {
            None if text.contains(markers.token) => {
                first_token = Some(started.elapsed());
                if seen_before {
                    head = gap;
                }
            }
            Some(_) if ends => tail = gap,
            Some(_) => middle = middle.max(gap),
            None => {}
        }
        last = now;
        if ends && text.contains(markers.complete) {
            completed = true;
        }
    }
    if !completed {
        bail!("stream did not complete");
    }
    Ok(StreamTimes { first_token: first_token.context("no token")?, max_gap, head, middle, tail })
}
