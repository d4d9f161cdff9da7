//! [`PushReceiver`]: a Web Push service on 127.0.0.1 started by the test (`push_receiver.py`,
//! on PyPI's `http_ece` and `cryptography`): it makes browsers' subscriptions, checks each
//! push's VAPID JWT and decrypts its payload; what it received is read back as JSON.

use std::collections::HashMap;

use serde_json::Value;

use super::sidecar::{Sidecar, free_port, python_has};

pub struct PushReceiver {
    pub port: u16,
    /// Each browser's subscription: `{"endpoint", "p256dh", "auth"}`.
    pub subscriptions: HashMap<String, Value>,
    sidecar: Sidecar,
}

/// Whether the receiver can run: `http_ece` is installed. Without it a push test is skipped (it
/// fails instead when `PARLEY_HTTP_ECE=required`, which `test.sh` sets after installing it).
pub fn push_receiver_available(test: &str) -> bool {
    python_has(test, "http_ece, cryptography", "PARLEY_HTTP_ECE", "http_ece")
}

impl PushReceiver {
    /// Starts the receiver with one subscription per name.
    pub async fn start(names: &[&str]) -> PushReceiver {
        let port = free_port();
        let sidecar = Sidecar::start("push_receiver.py", port, names, "pushes").await;
        let json = sidecar.ready.strip_prefix("ready ").expect("the receiver's ready line");
        let subscriptions = serde_json::from_str(json).expect("the subscriptions");
        PushReceiver { port, subscriptions, sidecar }
    }

    /// Every push received so far.
    pub fn received(&self) -> Vec<Value> {
        self.sidecar.received()
    }

    /// Waits (15 s at most) until `n` pushes arrived; returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Value> {
        self.sidecar.wait_for(n).await
    }
}
