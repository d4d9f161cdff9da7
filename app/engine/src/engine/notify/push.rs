//! Sends the push outbox (issue 43): each pending push is encrypted for its browser (RFC 8291,
//! `aes128gcm`, by `web-push-native` on RustCrypto) and POSTed to the browser's push service
//! (RFC 8030) with a VAPID `Authorization` header (RFC 8292), a `TTL` and an `Urgency`. Apart
//! from any request: a slow push service delays no page. A push service's 404 or 410 means
//! the subscription is gone: it is deleted. Other failures are retried with backoff.
//!
//! The payload names the notification's kind and conversation and the console's address of
//! it: ids only, never what the visitor wrote.

use std::time::Duration;

use serde_json::json;
use web_push_native::{Auth, WebPushBuilder};

use super::unbase64;
use super::vapid::Vapid;
use crate::engine::Engine;
use crate::engine::outbound;
use crate::store::DbError;
use crate::store::push::{self as store, DuePush};

/// The waits before the 2nd, 3rd, … attempt (a push is worth less the later it comes).
const RETRY_DELAYS: [Duration; 5] = [
    Duration::from_secs(5),
    Duration::from_secs(30),
    Duration::from_secs(2 * 60),
    Duration::from_secs(10 * 60),
    Duration::from_secs(3600),
];

/// How long one attempt may take, answer included.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a claimed push is held by its sender.
const LEASE_MS: i64 = 60_000;
/// Pushes claimed (and sent at once) per round.
const BATCH: i64 = 32;
/// How often each process looks for due pushes (a notification in this process wakes it).
const TICK: Duration = Duration::from_secs(1);
/// The JWT's lifetime (RFC 8292: at most 24 hours).
const JWT_SECS: i64 = 12 * 3600;

/// What one attempt came to.
enum Outcome {
    Sent,
    /// 404 or 410: the subscription no longer exists.
    Gone,
    Failed(String),
}

impl Engine {
    /// The VAPID key pair: the configured one, else the stored one (made on first use).
    pub async fn vapid(&self) -> Result<Vapid, String> {
        match &self.0.settings.push.vapid_private_key {
            Some(key) => Vapid::from_private(key.expose()).map_err(|e| format!("PARLEY_VAPID_PRIVATE_KEY: {e}")),
            None => Vapid::load_or_create(self.db(), self.now_ms()).await.map_err(|e| e.to_string()),
        }
    }

    /// This process's push sender, until the engine shuts down.
    pub(crate) fn spawn_push_sender(&self) {
        tokio::spawn(self.clone().send_pushes());
    }

    async fn send_pushes(self) {
        let closing = self.shutdown_state().streams_closing().clone();
        let mut vapid = None;
        loop {
            tokio::select! {
                () = closing.cancelled() => return,
                () = self.0.outbox.push.notified() => {}
                () = tokio::time::sleep(TICK) => {}
            }
            if vapid.is_none() {
                match self.vapid().await {
                    Ok(v) => vapid = Some(v),
                    Err(e) => {
                        tracing::warn!(error = %e, "no VAPID key: pushes wait");
                        continue;
                    }
                }
            }
            let Some(vapid) = vapid.as_ref() else { continue };
            loop {
                match self.deliver_due_pushes(vapid).await {
                    Ok(n) if n == usize::try_from(BATCH).unwrap_or(usize::MAX) => continue,
                    Ok(_) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "looking for due pushes");
                        break;
                    }
                }
            }
        }
    }

    /// Sends one round of due pushes at once; how many it tried.
    pub async fn deliver_due_pushes(&self, vapid: &Vapid) -> Result<usize, DbError> {
        let due = store::claim_due(self.db(), self.process_id(), self.now_ms(), LEASE_MS, BATCH).await?;
        let n = due.len();
        let results = futures::future::join_all(due.iter().map(|d| self.push_one(vapid, d))).await;
        for (d, outcome) in due.iter().zip(results) {
            let now = self.now_ms();
            match outcome {
                Outcome::Sent => store::record(self.db(), d, None, None, now).await?,
                Outcome::Gone => {
                    tracing::info!(subscription = %d.subscription_id, "the push service forgot a subscription: deleted");
                    store::forget(self.db(), &d.subscription_id).await?;
                }
                Outcome::Failed(e) => {
                    let retry = RETRY_DELAYS
                        .get(usize::try_from(d.attempts).unwrap_or(usize::MAX))
                        .map(|w| now.saturating_add(i64::try_from(w.as_millis()).unwrap_or(i64::MAX)));
                    tracing::info!(subscription = %d.subscription_id, error = %e, "a push attempt failed");
                    store::record(self.db(), d, Some(&e), retry, now).await?;
                }
            }
        }
        Ok(n)
    }

    async fn push_one(&self, vapid: &Vapid, due: &DuePush) -> Outcome {
        match self.post_push(vapid, due).await {
            Ok(404 | 410) => Outcome::Gone,
            Ok(status) if (200..300).contains(&status) => Outcome::Sent,
            Ok(status) => Outcome::Failed(format!("answered {status}")),
            Err(e) => Outcome::Failed(e),
        }
    }

    /// One encrypted, signed `POST`: the answer's status, or why there was none.
    async fn post_push(&self, vapid: &Vapid, due: &DuePush) -> Result<u16, String> {
        let url = outbound::check_url(&due.endpoint, self.0.settings.outbound).map_err(|e| e.to_string())?;
        let key = unbase64(&due.p256dh)
            .and_then(|k| p256::PublicKey::from_sec1_bytes(&k).ok())
            .ok_or("the subscription's p256dh is not a P-256 key")?;
        let auth = unbase64(&due.auth).filter(|a| a.len() == 16).ok_or("the subscription's auth is not 16 bytes")?;
        let console = self.services().public_url.trim_end_matches('/').to_owned();
        let payload = json!({
            "kind": due.kind,
            "conversation_id": due.conversation_id,
            "notification_id": due.notification_id,
            "url": format!("{console}/admin/conversations/{}", due.conversation_id),
        });
        let settings = &self.0.settings.push;
        let request = WebPushBuilder::new(
            due.endpoint.parse().map_err(|_| "the endpoint is not a URI".to_owned())?,
            key,
            Auth::clone_from_slice(&auth),
        )
        .with_valid_duration(settings.ttl)
        .build(payload.to_string())
        .map_err(|e| format!("encrypting the push: {e}"))?;
        let subject = settings.subject.clone().unwrap_or_else(|| console.clone());
        let exp = self.now_ms().div_euclid(1000) + JWT_SECS;
        let (parts, body) = request.into_parts();
        let mut sent = self
            .0
            .outbound
            .post(url.clone())
            .timeout(ATTEMPT_TIMEOUT)
            .header(reqwest::header::AUTHORIZATION, vapid.authorization(&url, &subject, exp))
            .header("Urgency", if matches!(due.kind.as_str(), "assigned" | "reply") { "high" } else { "normal" });
        // TTL, Content-Encoding, Content-Type (reqwest sets the length itself).
        for (name, value) in parts.headers.iter().filter(|(n, _)| *n != reqwest::header::CONTENT_LENGTH) {
            sent = sent.header(name.as_str(), value.as_bytes());
        }
        match sent.body(body).send().await {
            Ok(answer) => Ok(answer.status().as_u16()),
            Err(e) => Err(match outbound::refusal(&e) {
                Some(refused) => refused.to_string(),
                None if e.is_timeout() => format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs()),
                None if e.is_connect() => "could not connect".to_owned(),
                None => e.to_string(),
            }),
        }
    }
}
