//! [`SmtpSink`]: a real SMTP server (Python's `aiosmtpd`, from PyPI) on 127.0.0.1, started by the
//! test; what it receives is read back decoded (subject, plain text, HTML).

use serde_json::Value;

use super::sidecar::{Sidecar, free_port, python_has};

pub struct SmtpSink {
    pub port: u16,
    sidecar: Sidecar,
}

/// Whether the sink can run: `aiosmtpd` is installed. Without it a mail test is skipped (it
/// fails instead when `PARLEY_AIOSMTPD=required`, which `test.sh` sets after installing it).
pub fn smtp_available(test: &str) -> bool {
    python_has(test, "aiosmtpd", "PARLEY_AIOSMTPD", "aiosmtpd")
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        SmtpSink::start_on(free_port()).await
    }

    pub async fn start_on(port: u16) -> SmtpSink {
        let sidecar = Sidecar::start("smtp_sink.py", port, &[], "messages").await;
        assert_eq!(sidecar.ready, "ready", "the SMTP sink's first line");
        SmtpSink { port, sidecar }
    }

    /// Every message received so far.
    pub fn received(&self) -> Vec<Value> {
        self.sidecar.received()
    }

    /// Waits (15 s at most) until `n` messages arrived; returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Value> {
        self.sidecar.wait_for(n).await
    }
}

/// Sends one mail with Python's `smtplib` to 127.0.0.1:`port`: `{"sent": true}`, or
/// `{"refused": CODE, "message": …, "at": "rcpt" | "data"}`.
pub async fn smtp_send(port: u16, from: &str, to: &str, subject: &str, body: &str) -> Value {
    use tokio::io::AsyncWriteExt;
    let path = format!("{}/tests/it/harness/smtp_send.py", env!("CARGO_MANIFEST_DIR"));
    let mut child = tokio::process::Command::new("python3")
        .args([path.as_str(), &port.to_string(), from, to, subject])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 smtp_send.py");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(body.as_bytes()).await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("smtplib finished within 30 s")
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("smtp_send.py: {e}: {:?}", String::from_utf8_lossy(&out.stdout)))
}
