//! Knowledge from the owner's own content (issue 42): website sources crawled on demand and on a
//! schedule, uploaded files, typed snippets. Runs are rows in the database: any replica's runner
//! takes a queued run (or one whose process holds no live lease: stopped, or killed and its
//! lease expired) in one conditional update, so a run happens once across replicas and resumes
//! after a restart from the pages still queued.

pub mod crawl;
pub mod fetch;
pub mod files;
pub mod scope;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use parley_protocol::FieldError;

use super::Engine;
use super::outbound;
use crate::store::DbError;
use crate::store::knowledge::sources::{self as store, Run, SCHEDULES, SiteSettings, Source, SourceKind};
pub use crawl::Ended;
pub use fetch::CrawlSettings;

/// Why a source could not be made, changed or run.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("the form has errors")]
    Invalid(Vec<FieldError>),
    #[error("no such source")]
    NotFound,
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("search index: {0}")]
    Index(String),
}

/// A website source as the owner types it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebsiteInput {
    pub name: String,
    pub site: SiteSettings,
    pub schedule: String,
}

/// The runs this process is running, and what wakes its runner.
#[derive(Debug, Default)]
pub struct Runner {
    running: Mutex<HashSet<String>>,
    wake: tokio::sync::Notify,
}

impl Engine {
    /// Checks a website source: a name, a start URL the fence allows, patterns, a page limit
    /// and a schedule. Returns the input with its fields tidied.
    pub async fn check_website(&self, input: &WebsiteInput) -> Result<WebsiteInput, SourceError> {
        let mut errors = Vec::new();
        let mut out = input.clone();
        out.name = input.name.trim().to_owned();
        out.site.start_url = input.site.start_url.trim().to_owned();
        if out.name.is_empty() || out.name.chars().count() > 120 {
            errors.push(FieldError::new("name", "A name of 1 to 120 characters."));
        }
        match outbound::check_typed(&out.site.start_url, self.settings().outbound).await {
            Ok(url) => out.site.start_url = scope::normal(&url).to_string(),
            Err(e) => errors.push(FieldError::new("start_url", e.for_field(self.settings().outbound))),
        }
        out.site.path_prefix = input.site.path_prefix.trim().to_owned();
        if !out.site.path_prefix.is_empty() && !out.site.path_prefix.starts_with('/') {
            errors.push(FieldError::new("path_prefix", "A path that starts with /, such as /help/."));
        }
        let tidy = |list: &[String]| -> Vec<String> {
            list.iter().map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect()
        };
        out.site.include = tidy(&input.site.include);
        out.site.exclude = tidy(&input.site.exclude);
        for (field, list) in [("include", &out.site.include), ("exclude", &out.site.exclude)] {
            if list.len() > 50 || list.iter().any(|p| p.chars().count() > 200 || !p.starts_with(['/', '*'])) {
                errors.push(FieldError::new(
                    field,
                    "Up to 50 path patterns, each starting with / or *, such as /blog/*.",
                ));
            }
        }
        let max = self.settings().crawl.max_page_limit;
        if out.site.page_limit > max {
            errors.push(FieldError::new("page_limit", format!("At most {max} pages (0: the default).")));
        }
        if !SCHEDULES.contains(&input.schedule.as_str()) {
            errors.push(FieldError::new("schedule", "off, daily or weekly."));
        }
        if errors.is_empty() { Ok(out) } else { Err(SourceError::Invalid(errors)) }
    }

    /// Adds a website source to a base and queues its first run.
    pub async fn create_website(&self, knowledge_base_id: &str, input: &WebsiteInput) -> Result<Source, SourceError> {
        let input = self.check_website(input).await?;
        let now = self.now_ms();
        let source = store::create(
            self.db(),
            knowledge_base_id,
            SourceKind::Website,
            &input.name,
            &input.site,
            &input.schedule,
            now,
        )
        .await?;
        self.sync_source(&source.id).await?;
        Ok(source)
    }

    /// Changes a website source's name, scope and schedule (the next run uses them).
    pub async fn update_website(&self, id: &str, input: &WebsiteInput) -> Result<(), SourceError> {
        let input = self.check_website(input).await?;
        if !store::update(self.db(), id, &input.name, &input.site, &input.schedule, self.now_ms()).await? {
            return Err(SourceError::NotFound);
        }
        Ok(())
    }

    /// Queues a run of a website source now (the one already queued or running if there is one).
    pub async fn sync_source(&self, id: &str) -> Result<Run, SourceError> {
        let source = store::get(self.db(), id).await?.ok_or(SourceError::NotFound)?;
        if source.kind != SourceKind::Website {
            return Err(SourceError::Invalid(vec![FieldError::new("source", "Only a website source is synced.")]));
        }
        let (run, _) = store::queue_run(self.db(), id, self.now_ms()).await?;
        self.0.sources.wake.notify_one();
        Ok(run)
    }

    /// Deletes a source with its pages and passages (a run under way stops at its next report).
    pub async fn delete_source(&self, id: &str) -> Result<(), SourceError> {
        store::cancel(self.db(), id, self.now_ms()).await?;
        if !store::delete(self.db(), id).await? {
            return Err(SourceError::NotFound);
        }
        self.reload_knowledge().await
    }

    /// Takes a page out of the index and keeps it out of later runs.
    pub async fn exclude_page(&self, page_id: &str) -> Result<(), SourceError> {
        let reason = "excluded by the owner";
        if !store::retire(self.db(), page_id, "excluded", reason, self.now_ms()).await? {
            store::page(self.db(), page_id).await?.ok_or(SourceError::NotFound)?;
        }
        self.reload_knowledge().await
    }

    /// Rebuilds this process's search index (other replicas notice the change themselves).
    pub async fn reload_knowledge(&self) -> Result<(), SourceError> {
        self.services().knowledge.reload().await.map_err(|e| SourceError::Index(e.to_string()))
    }

    /// Starts this process's runner: every 2 s (or at once when woken) it queues the runs of
    /// sources whose schedule is due and takes the runs nobody is running.
    pub fn spawn_source_runner(&self) {
        let engine = self.clone();
        tokio::spawn(async move {
            while !engine.shutdown_state().is_draining() {
                engine.run_sources_once().await;
                let wake = engine.0.sources.wake.notified();
                let _ = tokio::time::timeout(Duration::from_secs(2), wake).await;
            }
        });
    }

    /// One pass of the runner: due schedules queued, free runs taken and started in the
    /// background. Returns the runs started.
    pub async fn run_sources_once(&self) -> Vec<String> {
        match self.take_sources().await {
            Ok(started) => started,
            Err(e) => {
                tracing::warn!(error = %e, "knowledge sources: could not look for runs");
                Vec::new()
            }
        }
    }

    async fn take_sources(&self) -> Result<Vec<String>, DbError> {
        let now = self.now_ms();
        for source in store::due(self.db(), now).await? {
            let (Some(due), Some(every)) = (source.next_sync_at, store::schedule_every_ms(&source.schedule)) else {
                continue;
            };
            if store::claim_due(self.db(), &source.id, due, now + every).await? {
                store::queue_run(self.db(), &source.id, now).await?;
            }
        }
        let stale = now - i64::try_from(self.settings().lease_ttl.as_millis()).unwrap_or(30_000);
        let mut started = Vec::new();
        for run in store::runs_to_take(self.db(), self.process_id(), stale).await? {
            if self.0.sources.running.lock().is_ok_and(|r| r.contains(&run.id)) {
                continue;
            }
            if !store::take_run(self.db(), &run, self.process_id(), now).await? {
                continue;
            }
            if let Ok(mut running) = self.0.sources.running.lock() {
                running.insert(run.id.clone());
            }
            started.push(run.id.clone());
            let engine = self.clone();
            tokio::spawn(async move {
                engine.finish_run(run).await;
            });
        }
        Ok(started)
    }

    /// Runs a taken run to its end and records how it ended.
    async fn finish_run(&self, run: Run) {
        let ended = match store::get(self.db(), &run.source_id).await {
            Ok(Some(source)) if source.kind == SourceKind::Website => self.crawl(source, &run.id).await,
            Ok(Some(_)) => Ended::Done,
            Ok(None) => Ended::Cancelled,
            Err(e) => Ended::Failed(format!("database: {e}")),
        };
        let now = self.now_ms();
        // A run cut short by this process stopping stays `running` for the next one to take.
        let ended = if self.shutdown_state().is_draining() && ended != Ended::Done { Ended::Lost } else { ended };
        // The index first: whoever sees the run ended can search what it stored.
        if ended != Ended::Lost
            && let Err(e) = self.reload_knowledge().await
        {
            tracing::warn!(error = %e, "knowledge sources: index not rebuilt after a run");
        }
        let finished = match &ended {
            Ended::Done => store::finish_run(self.db(), &run.id, "done", None, now).await,
            Ended::Failed(why) => store::finish_run(self.db(), &run.id, "failed", Some(why), now).await,
            Ended::Cancelled | Ended::Lost => Ok(()),
        };
        if let Err(e) = finished {
            tracing::warn!(error = %e, run = %run.id, "knowledge sources: could not record a run's end");
        }
        tracing::info!(run = %run.id, ended = ?ended, "knowledge source run ended");
        if let Ok(mut running) = self.0.sources.running.lock() {
            running.remove(&run.id);
        }
    }

    /// True while this process runs the run (tests wait on it).
    pub fn runs_here(&self, run_id: &str) -> bool {
        self.0.sources.running.lock().is_ok_and(|r| r.contains(run_id))
    }
}

/// The runner's state, made with the engine.
pub(super) fn runner() -> Arc<Runner> {
    Arc::new(Runner::default())
}
