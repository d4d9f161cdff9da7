//! A Python helper process a test starts on 127.0.0.1 (the SMTP sink, the push receiver): it
//! prints a ready line, writes what it receives as JSON lines to a file, and is killed with the
//! test. [`python_has`] says whether its PyPI packages are installed.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

/// A free port on 127.0.0.1 (nothing listens on it once this returns).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Whether `python3 -c "import {imports}"` works. Without it the test `test` is skipped, unless
/// the environment variable `required` is `required` (`test.sh` sets it after installing
/// `package`): then it fails.
pub fn python_has(test: &str, imports: &str, required: &str, package: &str) -> bool {
    let installed = std::process::Command::new("python3")
        .args(["-c", &format!("import {imports}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        let must = std::env::var(required).is_ok_and(|v| v == "required");
        assert!(!must, "{required}=required but `python3 -c 'import {imports}'` fails");
        eprintln!("SKIPPED {test}: the Python `{package}` package is not installed (python3 -m pip install {package})");
    }
    installed
}

/// A running helper: what it received is in `out`.
pub struct Sidecar {
    /// What the helper said on its first line.
    pub ready: String,
    /// What it is, in failure messages ("messages", "pushes").
    what: &'static str,
    out: PathBuf,
    _dir: tempfile::TempDir,
    _child: tokio::process::Child,
}

impl Sidecar {
    /// Starts `harness/{script}` with the port, the output file and `args`; waits 20 s at most
    /// for its first line.
    pub async fn start(script: &str, port: u16, args: &[&str], what: &'static str) -> Sidecar {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("received.jsonl");
        let path = format!("{}/tests/it/harness/{script}", env!("CARGO_MANIFEST_DIR"));
        let mut child = tokio::process::Command::new("python3")
            .arg(path)
            .arg(port.to_string())
            .arg(&out)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {script}: {e}"));
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = match tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await {
            Ok(Ok(Some(line))) => line,
            other => panic!("{script} did not start: {other:?}"),
        };
        Sidecar { ready, what, out, _dir: dir, _child: child }
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Waits (15 s at most) until `n` arrived; returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(tokio::time::Instant::now() < deadline, "{} {}, not {n}: {got:#?}", got.len(), self.what);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
