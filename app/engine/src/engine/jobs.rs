//! Periodic jobs that change shared data run once across replicas: each replica ticks, and the
//! one that claims a due run in the database ([`crate::store::jobs::claim`]) does it.
//! Work each replica must do for itself (renewing its lease, refreshing its knowledge index,
//! pruning its rate limiters) is not a job.

use std::time::Duration;

use super::Engine;
use crate::store::jobs;

/// A job and how often it runs (at most once per period across all replicas).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// Pending payment orders past their 30 minutes become `expired` (and their QR block says so).
    ExpireOrders,
    /// Payment webhook call ids are kept for replay detection, then forgotten.
    ForgetWebhookIds,
    /// Console sessions past their expiry.
    DeleteExpiredSessions,
    /// Images uploaded but never sent, after a day.
    DeleteUnsentImages,
    /// Knowledge chunks without a vector get one (when an embeddings endpoint is configured).
    EmbedKnowledge,
    /// Conversations past their agent's retention period are deleted.
    Retention,
    /// The daily summary mail.
    DailySummary,
    /// Finished webhook deliveries after 30 days, sent mail after 7.
    PruneOutboxes,
    /// Automatic teams' unassigned conversations go to members who came online or have room now.
    AssignQueue,
    /// New and changed messages, notes and leads go into the search index (`engine/search.rs`).
    IndexSearch,
    /// Mail digests of operators' notifications left unread past each one's delay.
    MailDigests,
    /// Replies to visitors who left go to them by mail (`engine/mail/return_mail.rs`).
    ReturnMail,
    /// Trial conversations (previews, answer tests) untouched for an hour are deleted.
    DeleteIdleTrials,
    /// The reports' roll-up catches up with what changed (`engine/reports`).
    RefreshReports,
    /// The reports' roll-up rebuilt for the last two days' changes (writes that arrived late).
    RebuildRecentReports,
}

impl Job {
    pub fn name(self) -> &'static str {
        match self {
            Job::ExpireOrders => "expire_orders",
            Job::ForgetWebhookIds => "forget_webhook_ids",
            Job::DeleteExpiredSessions => "delete_expired_sessions",
            Job::DeleteUnsentImages => "delete_unsent_images",
            Job::EmbedKnowledge => "embed_knowledge",
            Job::Retention => "retention",
            Job::DailySummary => "daily_summary",
            Job::PruneOutboxes => "prune_outboxes",
            Job::AssignQueue => "assign_queue",
            Job::IndexSearch => "index_search",
            Job::MailDigests => "mail_digests",
            Job::ReturnMail => "return_mail",
            Job::DeleteIdleTrials => "delete_idle_trials",
            Job::RefreshReports => "refresh_reports",
            Job::RebuildRecentReports => "rebuild_recent_reports",
        }
    }

    /// The shortest time between two runs. Replicas tick more often than this (see
    /// [`Job::tick`]) so that a run is late by at most one tick.
    pub fn every(self) -> Duration {
        match self {
            // Ticks every 2 s; a little under it, so that a tick arriving a moment early runs.
            Job::ExpireOrders | Job::EmbedKnowledge | Job::IndexSearch | Job::ReturnMail => {
                Duration::from_millis(1_500)
            }
            Job::ForgetWebhookIds
            | Job::DeleteExpiredSessions
            | Job::DeleteUnsentImages
            | Job::Retention
            | Job::DeleteIdleTrials
            | Job::PruneOutboxes => Duration::from_secs(3_600),
            Job::DailySummary | Job::RebuildRecentReports => Duration::from_secs(86_400),
            Job::AssignQueue | Job::MailDigests => Duration::from_secs(9),
            Job::RefreshReports => Duration::from_secs(60),
        }
    }

    /// How often each replica asks whether the job is due.
    pub fn tick(self) -> Duration {
        match self {
            Job::ExpireOrders | Job::EmbedKnowledge | Job::IndexSearch | Job::ReturnMail => Duration::from_secs(2),
            Job::AssignQueue | Job::MailDigests => Duration::from_secs(5),
            Job::RefreshReports => Duration::from_secs(9),
            Job::ForgetWebhookIds
            | Job::DeleteExpiredSessions
            | Job::DeleteUnsentImages
            | Job::Retention
            | Job::DailySummary
            | Job::RebuildRecentReports
            | Job::DeleteIdleTrials
            | Job::PruneOutboxes => Duration::from_secs(60),
        }
    }
}

impl Engine {
    /// Starts the sweepers: console sessions past their expiry (refused when read; this removes
    /// them) and images uploaded but never sent (after a day). Each hourly, once across replicas.
    pub fn spawn_sweepers(&self) {
        // Session expiry is wall-clock time (tower-sessions), whatever clock the engine uses.
        let sessions = crate::store::sessions::DbSessionStore::new(self.db().clone());
        self.every(Job::DeleteExpiredSessions, move |_| {
            let sessions = sessions.clone();
            async move {
                let now = super::clock::Clock::now_ms(&super::clock::SystemClock);
                if let Err(e) = sessions.delete_expired(now).await {
                    tracing::warn!(error = %e, "could not delete expired console sessions");
                }
            }
        });
        self.every(Job::DeleteUnsentImages, |engine| async move {
            match engine.delete_unsent_attachments().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "deleted images that were never sent"),
                Err(e) => tracing::warn!(error = %e, "could not delete images that were never sent"),
            }
        });
        self.every(Job::AssignQueue, |engine| async move {
            engine.assign_waiting().await;
        });
        self.every(Job::IndexSearch, |engine| async move {
            if let Err(e) = engine.index_search().await {
                tracing::warn!(error = %e, "could not update the search index");
            }
        });
        self.every(Job::MailDigests, |engine| async move {
            if let Err(e) = engine.send_digests().await {
                tracing::warn!(error = %e, "could not send the notification digests");
            }
        });
        self.every(Job::DeleteIdleTrials, |engine| async move {
            match engine.delete_idle_trials().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "deleted idle trial conversations"),
                Err(e) => tracing::warn!(error = %e, "could not delete idle trial conversations"),
            }
        });
        self.every(Job::RefreshReports, |engine| async move {
            if let Err(e) = engine.refresh_reports().await {
                tracing::warn!(error = %e, "could not refresh the reports' figures");
            }
        });
        self.every(Job::RebuildRecentReports, |engine| async move {
            let since = engine.now_ms() - 2 * 86_400_000;
            if let Err(e) = engine.rebuild_reports_since(since).await {
                tracing::warn!(error = %e, "could not rebuild the reports' figures of the last two days");
            }
        });
        self.every(Job::ReturnMail, |engine| async move {
            if let Err(e) = engine.send_return_mail().await {
                tracing::warn!(error = %e, "could not send the mail to visitors who left");
            }
        });
    }

    /// Runs `work` whenever `job` is due and this process claimed it, checking every tick.
    fn every<F, Fut>(&self, job: Job, work: F)
    where
        F: Fn(Engine) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let engine = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(job.tick());
            loop {
                tick.tick().await;
                if engine.claim_job(job).await {
                    work(engine.clone()).await;
                }
            }
        });
    }

    /// True if this process is to run `job` now: it is due and no other replica claimed it. A
    /// database error is logged and counts as "not now" (the next tick asks again).
    pub async fn claim_job(&self, job: Job) -> bool {
        let every = i64::try_from(job.every().as_millis()).unwrap_or(i64::MAX);
        match jobs::claim(self.db(), job.name(), every, self.process_id(), self.now_ms()).await {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!(job = job.name(), error = %e, "could not claim a periodic job");
                false
            }
        }
    }
}
