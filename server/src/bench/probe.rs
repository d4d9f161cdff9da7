//! What the benchmarks read about the processes they run, from Linux's `/proc` (nothing
//! elsewhere): resident memory, CPU time, children and processes by name, and a sampler that
//! keeps a running figure (a peak) until stopped.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Resident memory of process `pid` in MiB.
pub(super) fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 =
        status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// User and system CPU time, in ticks, of a `stat` file (`/proc/PID/stat` or a thread's).
fn stat_ticks(path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // After the command name's closing parenthesis: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?)
}

/// User and system CPU time of `pids` together, seconds (`/proc/PID/stat`, 100 ticks a second).
pub(super) fn cpu_seconds(pids: &[u32]) -> f64 {
    pids.iter().filter_map(|pid| stat_ticks(&format!("/proc/{pid}/stat"))).sum::<f64>() / 100.0
}

/// CPU seconds of process `pid`'s threads that are alive, summed by the thread's name without
/// its trailing number (`tokio-runtime-w`, `sqlx-sqlite-wor`: Linux keeps 15 characters).
pub(super) fn threads_cpu_seconds(pid: u32) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return out };
    for task in tasks.filter_map(|t| t.ok()) {
        let dir = task.path();
        let (Ok(comm), Some(ticks)) =
            (std::fs::read_to_string(dir.join("comm")), stat_ticks(&dir.join("stat").to_string_lossy()))
        else {
            continue;
        };
        let name = comm.trim().trim_end_matches(|c: char| c.is_ascii_digit() || c == '-').to_owned();
        *out.entry(name).or_insert(0.0) += ticks / 100.0;
    }
    out
}

/// The processes whose command name is `name` (PostgreSQL's backends).
pub(super) fn processes_named(name: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name))
        .collect()
}

/// The child processes of `pid` (nginx's workers).
pub(super) fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|s| s.split_whitespace().filter_map(|p| p.parse().ok()).collect())
        .unwrap_or_default()
}

/// A task that takes a sample every so often and folds it into a running figure, until stopped.
pub(super) struct Sampling<T> {
    running: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<T>,
}

impl<T: Default + Send + 'static> Sampling<T> {
    pub fn start<S, F, Fut>(
        every: Duration,
        mut figure: T,
        sample: F,
        fold: impl Fn(&mut T, S) + Send + 'static,
    ) -> Self
    where
        S: Send + 'static,
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = S> + Send,
    {
        let running = Arc::new(AtomicBool::new(true));
        let still = running.clone();
        let task = tokio::spawn(async move {
            while still.load(Ordering::Relaxed) {
                let now = sample().await;
                fold(&mut figure, now);
                tokio::time::sleep(every).await;
            }
            figure
        });
        Sampling { running, task }
    }

    /// The figure as it stands.
    pub async fn stop(self) -> T {
        self.running.store(false, Ordering::Relaxed);
        self.task.await.unwrap_or_default()
    }
}

/// The peak resident memory of some processes, sampled every 20 ms until stopped: each one's, in
/// MiB (`None` where `/proc` did not tell).
pub(super) fn peak_rss(pids: Vec<u32>) -> Sampling<Vec<Option<f64>>> {
    let peaks = vec![None; pids.len()];
    let sample = move || {
        let now: Vec<Option<f64>> = pids.iter().map(|pid| rss_mib(*pid)).collect();
        async move { now }
    };
    Sampling::start(Duration::from_millis(20), peaks, sample, |peaks: &mut Vec<Option<f64>>, now| {
        for (peak, now) in peaks.iter_mut().zip(now) {
            if let Some(now) = now {
                *peak = Some(peak.map_or(now, |p: f64| p.max(now)));
            }
        }
    })
}
