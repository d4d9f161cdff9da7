//! Every log line of the test binary, from the first server started on, in memory — one global
//! subscriber, as the server binary has one — and the check that no secret is in any of them:
//! provider keys, the webhook secret, console passwords, the key that seals provider keys. A
//! line with one fails the next [`TestApp`](super::TestApp) to stop (whichever test that is),
//! so the whole suite is covered, not just the tests that look.

use std::sync::{Arc, Mutex, OnceLock};

use parley_server::config::TEST_WEBHOOK_SECRET;

use super::fixtures::PASSWORD;

/// The secrets every test server knows.
const KNOWN: &[&str] = &["sk-test-secret", "sk-ant-test-secret", TEST_WEBHOOK_SECRET, PASSWORD];

#[derive(Default)]
struct Inner {
    text: Vec<u8>,
    secrets: Vec<String>,
    /// Lines that held a secret.
    leaks: Vec<String>,
}

impl Inner {
    fn scan(&mut self, line: &str) {
        if let Some(secret) = self.secrets.iter().find(|s| line.contains(s.as_str())) {
            let shown: String = secret.chars().take(6).collect();
            self.leaks.push(format!("a secret ({shown}…) in the log line: {line}"));
        }
    }
}

/// The captured log.
#[derive(Clone)]
pub struct Captured(Arc<Mutex<Inner>>);

/// The log, capturing from the first call on (every [`TestApp`](super::TestApp) calls it).
pub fn captured_logs() -> &'static Captured {
    static LOGS: OnceLock<Captured> = OnceLock::new();
    LOGS.get_or_init(|| {
        let inner = Inner { secrets: KNOWN.iter().map(|s| s.to_string()).collect(), ..Inner::default() };
        let logs = Captured(Arc::new(Mutex::new(inner)));
        let writer = logs.clone();
        let filter = tracing_subscriber::EnvFilter::new("info,parley_app=debug,parley_server=debug");
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber of the tests");
        logs
    })
}

impl Captured {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.lock().text).into_owned()
    }

    /// One more secret no log line may hold (the lines so far are checked too).
    pub fn secret(&self, secret: &str) {
        if secret.len() < 8 {
            return;
        }
        let mut inner = self.lock();
        inner.secrets.push(secret.to_owned());
        let text = String::from_utf8_lossy(&inner.text).into_owned();
        for line in text.lines().filter(|l| l.contains(secret)) {
            inner.scan(line);
        }
    }

    /// Fails with every line that held a secret.
    pub fn assert_no_secret(&self) {
        let leaks = self.lock().leaks.clone();
        assert!(leaks.is_empty(), "secrets in the log:\n{}", leaks.join("\n"));
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut inner = self.lock();
        // One event is one write of whole lines.
        let text = String::from_utf8_lossy(buf).into_owned();
        for line in text.lines() {
            inner.scan(line);
        }
        inner.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_line_with_a_secret_is_caught() {
    let mut inner = Inner { secrets: vec!["sk-live-0123456789".into()], ..Inner::default() };
    inner.scan("INFO parley: calling https://api.example.com with key sk-live-0123456789");
    inner.scan("INFO parley: key ending 6789");
    assert_eq!(inner.leaks.len(), 1, "{:?}", inner.leaks);
    assert!(inner.leaks[0].contains("sk-liv…"));
}
