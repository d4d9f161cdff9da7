//! [`SmtpSink`]: a real SMTP server (Python's `aiosmtpd`, from PyPI) on 127.0.0.1, started by the
//! test; what it receives is read back decoded (subject, plain text, HTML).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

pub struct SmtpSink {
    pub port: u16,
    out: PathBuf,
    _dir: tempfile::TempDir,
    _child: tokio::process::Child,
}

/// Whether the sink can run: `aiosmtpd` is installed. Without it a mail test is skipped (it
/// fails instead when `PARLEY_AIOSMTPD=required`, which `test.sh` sets after installing it).
pub fn smtp_available(test: &str) -> bool {
    let installed = std::process::Command::new("python3")
        .args(["-c", "import aiosmtpd"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        let required = std::env::var("PARLEY_AIOSMTPD").is_ok_and(|v| v == "required");
        assert!(!required, "PARLEY_AIOSMTPD=required but `python3 -c 'import aiosmtpd'` fails");
        eprintln!("SKIPPED {test}: the Python `aiosmtpd` package is not installed (python3 -m pip install aiosmtpd)");
    }
    installed
}

/// A free port on 127.0.0.1 (nothing listens on it once this returns).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        SmtpSink::start_on(free_port()).await
    }

    pub async fn start_on(port: u16) -> SmtpSink {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("mail.jsonl");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/harness/smtp_sink.py");
        let mut child = tokio::process::Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(&out)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start the SMTP sink");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await;
        assert!(matches!(ready, Ok(Ok(Some(ref l))) if l == "ready"), "the SMTP sink did not start: {ready:?}");
        SmtpSink { port, out, _dir: dir, _child: child }
    }

    /// Every message received so far.
    pub fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Waits (15 s at most) until `n` messages arrived; returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(tokio::time::Instant::now() < deadline, "{} messages, not {n}: {got:#?}", got.len());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
