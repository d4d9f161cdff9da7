//! [`PushReceiver`]: a Web Push service on 127.0.0.1 started by the test (`push_receiver.py`,
//! on PyPI's `http_ece` and `cryptography`): it makes browsers' subscriptions, checks each
//! push's VAPID JWT and decrypts its payload; what it received is read back as JSON.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::free_port;

pub struct PushReceiver {
    pub port: u16,
    /// Each browser's subscription: `{"endpoint", "p256dh", "auth"}`.
    pub subscriptions: HashMap<String, Value>,
    out: PathBuf,
    _dir: tempfile::TempDir,
    _child: tokio::process::Child,
}

/// Whether the receiver can run: `http_ece` is installed. Without it a push test is skipped (it
/// fails instead when `PARLEY_HTTP_ECE=required`, which `test.sh` sets after installing it).
pub fn push_receiver_available(test: &str) -> bool {
    let installed = std::process::Command::new("python3")
        .args(["-c", "import http_ece, cryptography"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        let required = std::env::var("PARLEY_HTTP_ECE").is_ok_and(|v| v == "required");
        assert!(!required, "PARLEY_HTTP_ECE=required but `python3 -c 'import http_ece'` fails");
        eprintln!("SKIPPED {test}: the Python `http_ece` package is not installed (python3 -m pip install http_ece)");
    }
    installed
}

impl PushReceiver {
    /// Starts the receiver with one subscription per name.
    pub async fn start(names: &[&str]) -> PushReceiver {
        let port = free_port();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pushes.jsonl");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/harness/push_receiver.py");
        let mut child = tokio::process::Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(&out)
            .args(names)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start the push receiver");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await;
        let line = match ready {
            Ok(Ok(Some(l))) => l,
            other => panic!("the push receiver did not start: {other:?}"),
        };
        let json = line.strip_prefix("ready ").expect("the receiver's ready line");
        let subscriptions = serde_json::from_str(json).expect("the subscriptions");
        PushReceiver { port, subscriptions, out, _dir: dir, _child: child }
    }

    /// Every push received so far.
    pub fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Waits (15 s at most) until `n` pushes arrived; returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(tokio::time::Instant::now() < deadline, "{} pushes, not {n}: {got:#?}", got.len());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
