//! Outbound webhooks (issue 17): endpoints an owner adds to an agent, and the sender that
//! delivers the outbox ([`crate::store::webhooks`]).
//!
//! Each attempt is a `POST` of the stored JSON body signed the Standard Webhooks way
//! (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<HMAC-SHA256>`), through the
//! client for owner-typed addresses ([`super::outbound`]: public `https` only unless
//! `PARLEY_ALLOW_PRIVATE_ENDPOINTS`), with no redirects. A 2xx answer delivers it; anything else
//! is tried again after [`RETRY_DELAYS`] (about a day in all), then the delivery has failed — and
//! if nothing reached the endpoint meanwhile, the endpoint is disabled (the console says why; the
//! owner turns it back on and its waiting deliveries go out). `410 Gone` disables it at once.
//!
//! Deliveries go out concurrently, each in a task of its own: at most [`PER_ENDPOINT`] in flight
//! to one endpoint and [`IN_FLIGHT`] in all, each attempt cut after [`ATTEMPT_TIMEOUT`]; mail is
//! sent by a loop of its own. So a slow endpoint delays neither other endpoints nor mail.

use std::time::{Duration, Instant};

use super::Engine;
use super::outbound::{self, OutboundError, OutboundSettings};
use super::payments::webhooks::WebhookSecret;
use crate::store::webhooks::{self as store, Attempt, Due, EVENTS, Endpoint, Next};
use crate::store::{Db, DbError};

/// The waits before the 2nd, 3rd, … attempt: 8 attempts over 23 h 36 min.
pub const RETRY_DELAYS: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(60),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(6 * 3600),
    Duration::from_secs(15 * 3600),
];

/// How long one attempt may take, answer included.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a claimed delivery is held by its sender: past it, a sender that died lets go.
const LEASE: Duration = Duration::from_secs(60);

/// Deliveries sent at once by one process (all endpoints together).
const IN_FLIGHT: usize = 64;

/// Deliveries in flight at once to one endpoint: a slow endpoint holds at most this many senders
/// (each for [`ATTEMPT_TIMEOUT`] at most) while the others' deliveries go on.
pub const PER_ENDPOINT: i64 = 4;

/// Mails claimed at once (sent one after another, in a loop of their own).
const MAIL_BATCH: usize = 16;

/// How often each process looks for due deliveries (an event in this process wakes it at once).
const TICK: Duration = Duration::from_secs(1);

/// How long the log keeps a delivered or failed webhook.
pub const KEEP_DELIVERIES: Duration = Duration::from_secs(30 * 86_400);

/// How long sent (or given up) mail is kept.
pub const KEEP_MAIL: Duration = Duration::from_secs(7 * 86_400);

/// Endpoints per agent.
pub const MAX_ENDPOINTS: usize = 20;

/// Why an endpoint cannot be added.
#[derive(Debug, thiserror::Error)]
pub enum WebhookSetupError {
    #[error("{0}")]
    Url(#[from] OutboundError),
    #[error("choose at least one event")]
    NoEvents,
    #[error("unknown event `{0}`")]
    UnknownEvent(String),
    #[error("an agent has at most {MAX_ENDPOINTS} endpoints")]
    TooMany,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Adds an endpoint to the agent after checking its address and events (the console and the
/// command line); returns it and its signing secret (`whsec_…`, shown once).
pub async fn add_endpoint(
    db: &Db,
    settings: OutboundSettings,
    agent_id: &str,
    url: &str,
    events: &[String],
    now: i64,
) -> Result<(Endpoint, String), WebhookSetupError> {
    let url = outbound::check_url(url, settings)?;
    outbound::check_host(&url, settings).await?;
    let mut chosen: Vec<String> = Vec::new();
    for event in events.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        if !EVENTS.contains(&event) {
            return Err(WebhookSetupError::UnknownEvent(event.to_owned()));
        }
        if !chosen.iter().any(|c| c == event) {
            chosen.push(event.to_owned());
        }
    }
    if chosen.is_empty() {
        return Err(WebhookSetupError::NoEvents);
    }
    if store::of_agent(db, agent_id).await?.len() >= MAX_ENDPOINTS {
        return Err(WebhookSetupError::TooMany);
    }
    let secret = WebhookSecret::random().to_text();
    let endpoint = store::create(db, agent_id, url.as_str(), &chosen, &secret, now).await?;
    Ok((endpoint, secret))
}

impl Engine {
    /// [`add_endpoint`] with this server's outbound settings.
    pub async fn add_webhook(
        &self,
        agent_id: &str,
        url: &str,
        events: &[String],
    ) -> Result<(Endpoint, String), WebhookSetupError> {
        add_endpoint(self.db(), self.settings().outbound, agent_id, url, events, self.now_ms()).await
    }

    /// Queues a delivery again with a fresh schedule ("send again"); its endpoint's id, or `None`.
    pub async fn resend_webhook(&self, delivery_id: &str) -> Result<Option<String>, DbError> {
        let endpoint = store::resend(self.db(), delivery_id, self.now_ms()).await?;
        self.wake_outbox();
        Ok(endpoint)
    }

    /// Turns an endpoint on or off; false when there is none.
    pub async fn set_webhook_enabled(&self, endpoint_id: &str, enabled: bool) -> Result<bool, DbError> {
        let done = store::set_enabled(self.db(), endpoint_id, enabled, self.now_ms()).await?;
        self.wake_outbox();
        Ok(done)
    }

    /// Forgets finished webhook deliveries after [`KEEP_DELIVERIES`] and sent mail after
    /// [`KEEP_MAIL`] (a job, hourly across replicas).
    pub async fn prune_outboxes(&self) -> Result<(), DbError> {
        let now = self.now_ms();
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        store::prune(self.db(), now - ms(KEEP_DELIVERIES)).await?;
        crate::store::mail::prune(self.db(), now - ms(KEEP_MAIL)).await?;
        // The transcript ledger counts a day; two are kept.
        crate::store::mail_confirm::prune(self.db(), now - 2 * 86_400_000, now).await?;
        // Daily spend totals (one row per spender and day): today's and yesterday's are kept.
        crate::store::spend::prune(self.db(), now.div_euclid(super::budget::DAY_MS) - 1).await?;
        Ok(())
    }

    /// Tells this process's senders (webhooks and mail) that something was queued (other
    /// processes find it within a tick).
    pub fn wake_outbox(&self) {
        self.0.outbox.webhooks.notify_one();
        self.0.outbox.mail.notify_one();
        self.0.outbox.push.notify_one();
    }

    /// Sends the deliveries due now (up to [`IN_FLIGHT`], [`PER_ENDPOINT`] per endpoint, at
    /// once) and waits for them; how many it tried.
    pub async fn deliver_due(&self) -> Result<usize, DbError> {
        let due = self.claim_webhooks(IN_FLIGHT).await?;
        let n = due.len();
        futures::future::join_all(due.into_iter().map(|d| self.attempt(d))).await;
        Ok(n)
    }

    async fn claim_webhooks(&self, room: usize) -> Result<Vec<Due>, DbError> {
        let lease = i64::try_from(LEASE.as_millis()).unwrap_or(i64::MAX);
        let limit = i64::try_from(room).unwrap_or(i64::MAX);
        store::claim_due(self.db(), self.process_id(), self.now_ms(), lease, limit, PER_ENDPOINT).await
    }

    async fn attempt(&self, due: Due) {
        let started = Instant::now();
        let (status, error) = match self.post(&due).await {
            Ok(status) if (200..300).contains(&status) => (Some(status), None),
            Ok(status) => (Some(status), Some(format!("answered {status}"))),
            Err(error) => (None, Some(error)),
        };
        let now = self.now_ms();
        let next = match (status, &error) {
            (_, None) => Next::Delivered,
            (Some(410), _) => Next::GiveUp { disable: Some("the endpoint answered 410 Gone".into()), always: true },
            _ => match RETRY_DELAYS.get(usize::try_from(due.attempts).unwrap_or(usize::MAX)) {
                Some(wait) => Next::RetryAt(now.saturating_add(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX))),
                None => Next::GiveUp {
                    disable: Some(format!(
                        "every attempt failed for a day (last: {})",
                        error.as_deref().unwrap_or("?")
                    )),
                    always: false,
                },
            },
        };
        let attempt =
            Attempt { status, error, duration_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX) };
        if let Err(e) = store::record(self.db(), &due, &attempt, &next, now).await {
            // The lock runs out and the delivery is tried again: at least once.
            tracing::warn!(delivery = %due.id, error = %e, "recording a webhook attempt");
        }
        match next {
            Next::Delivered => tracing::debug!(delivery = %due.id, event = %due.event, "webhook delivered"),
            _ => tracing::info!(
                delivery = %due.id,
                event = %due.event,
                error = attempt.error.as_deref().unwrap_or_default(),
                "webhook attempt failed"
            ),
        }
    }

    /// One signed `POST`: the answer's status, or why there was none.
    async fn post(&self, due: &Due) -> Result<u16, String> {
        let secret = match store::secret(self.db(), &due.endpoint_id).await {
            Ok(Some(s)) => WebhookSecret::parse(&s).map_err(|e| format!("the endpoint's secret: {e}"))?,
            Ok(None) => return Err("the endpoint is gone".into()),
            Err(e) => return Err(format!("reading the endpoint's secret: {e}")),
        };
        let timestamp = self.now_ms().div_euclid(1000);
        let signature = secret.sign(&due.id, timestamp, due.payload.as_bytes());
        let sent = self
            .0
            .outbound
            .post(&due.url)
            .timeout(ATTEMPT_TIMEOUT)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", &due.id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(due.payload.clone())
            .send()
            .await;
        match sent {
            Ok(answer) => Ok(answer.status().as_u16()),
            Err(e) => Err(match outbound::refusal(&e) {
                Some(refused) => refused.to_string(),
                None if e.is_timeout() => format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs()),
                None if e.is_connect() => "could not connect".to_owned(),
                None => e.to_string(),
            }),
        }
    }

    /// This process's senders: webhooks and mail, each in a task of its own, until the engine
    /// shuts down.
    pub fn spawn_webhook_sender(&self) {
        tokio::spawn(self.clone().send_webhooks());
        tokio::spawn(self.clone().send_mail());
        self.spawn_push_sender();
    }

    /// Keeps up to [`IN_FLIGHT`] deliveries going, each in a task of its own: it claims more
    /// when one ends, when woken, and every [`TICK`], so a slow endpoint (at most
    /// [`PER_ENDPOINT`] of them) delays no other endpoint's deliveries.
    async fn send_webhooks(self) {
        let closing = self.shutdown_state().streams_closing().clone();
        let mut running = tokio::task::JoinSet::new();
        loop {
            let room = IN_FLIGHT.saturating_sub(running.len());
            if room > 0 {
                match self.claim_webhooks(room).await {
                    Ok(due) => {
                        for d in due {
                            let engine = self.clone();
                            running.spawn(async move { engine.attempt(d).await });
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "looking for due webhooks"),
                }
            }
            tokio::select! {
                () = closing.cancelled() => {
                    // Attempts under way finish on their own (or their lock runs out).
                    running.detach_all();
                    return;
                }
                () = self.0.outbox.webhooks.notified() => {}
                () = tokio::time::sleep(TICK) => {}
                Some(_) = running.join_next(), if !running.is_empty() => {}
            }
        }
    }

    /// Sends due mail every [`TICK`], or at once when woken, batch after batch: apart from the
    /// webhooks, so no endpoint delays a mail.
    async fn send_mail(self) {
        let closing = self.shutdown_state().streams_closing().clone();
        loop {
            tokio::select! {
                () = closing.cancelled() => return,
                () = self.0.outbox.mail.notified() => {}
                () = tokio::time::sleep(TICK) => {}
            }
            loop {
                match self.deliver_due_mail().await {
                    Ok(n) if n == MAIL_BATCH => continue,
                    Ok(_) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "looking for due mail");
                        break;
                    }
                }
            }
        }
    }
}

/// What wakes this process's senders: an event or a mail was queued.
#[derive(Default)]
pub struct Wake {
    webhooks: tokio::sync::Notify,
    mail: tokio::sync::Notify,
    /// Operators' Web Push (`engine::notify::push`).
    pub(crate) push: tokio::sync::Notify,
}
