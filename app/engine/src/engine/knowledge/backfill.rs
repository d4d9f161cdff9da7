//! Embeddings for knowledge stored without them — before an embeddings endpoint was configured,
//! or while it failed — filled in the background, a batch at a time, by one replica at a time
//! ([`crate::engine::jobs::Job::EmbedKnowledge`]). The console shows the progress.
//! Until a chunk has its vector, search ranks it by its words alone (see `blend`).

use std::sync::atomic::Ordering;

use super::{Knowledge, SearchError};
use crate::store::chunk_vectors;

/// Chunks embedded per request to the endpoint.
pub const BATCH: usize = 32;
/// Batches in one run; the rest waits for the next run (so that a run ends, and a restart or
/// another replica carries on).
const BATCHES_PER_RUN: usize = 50;

/// How far the background embedding is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EmbeddingProgress {
    /// An embeddings endpoint is configured.
    pub configured: bool,
    pub chunks: i64,
    pub embedded: i64,
    /// Vectors in this replica's search index (it catches up with `embedded` once rebuilt).
    pub indexed: i64,
    /// The last failure of this replica's runs, cleared by a run that stores vectors.
    pub last_error: Option<String>,
}

impl Knowledge {
    /// Embeds chunks that have no vector yet (at most [`BATCHES_PER_RUN`] batches), then rebuilds
    /// the index when any were stored; the number stored. Nothing to do without an endpoint, or
    /// while another run of this process is under way.
    pub async fn embed_missing(&self) -> Result<usize, SearchError> {
        let Some(embedder) = &self.embedder else { return Ok(0) };
        if self.backfilling.swap(true, Ordering::AcqRel) {
            return Ok(0);
        }
        let outcome = self.embed_batches(embedder).await;
        self.backfilling.store(false, Ordering::Release);
        let stored = outcome?;
        if stored > 0 {
            self.reload().await?;
        }
        Ok(stored)
    }

    async fn embed_batches(&self, embedder: &super::Embedder) -> Result<usize, SearchError> {
        let mut stored = 0;
        for _ in 0..BATCHES_PER_RUN {
            let waiting = chunk_vectors::waiting(&self.db, BATCH as i64).await?;
            if waiting.is_empty() {
                break;
            }
            let inputs: Vec<String> = waiting.iter().map(|w| format!("{}\n{}", w.title, w.text)).collect();
            let vectors = match embedder.embed(&inputs).await {
                Ok(v) => v,
                Err(e) => {
                    tracing::warn!(error = %e, "embedding stored knowledge; trying again later");
                    self.set_last_error(Some(e.to_string()));
                    break;
                }
            };
            let rows: Vec<(String, Vec<f32>)> = waiting.into_iter().map(|w| w.id).zip(vectors).collect();
            chunk_vectors::store(&self.db, &rows).await?;
            stored += rows.len();
            self.set_last_error(None);
            metrics::counter!("parley_knowledge_chunks_embedded_total").increment(rows.len() as u64);
        }
        Ok(stored)
    }

    fn set_last_error(&self, error: Option<String>) {
        if let Ok(mut slot) = self.last_embed_error.lock() {
            *slot = error;
        }
    }

    /// The background embedding's progress.
    pub async fn embedding_progress(&self) -> Result<EmbeddingProgress, SearchError> {
        let (chunks, embedded) = chunk_vectors::counts(&self.db).await?;
        Ok(EmbeddingProgress {
            configured: self.embedder.is_some(),
            chunks,
            embedded,
            indexed: self.snapshot().map_or(0, |b| b.vectors.len() as i64),
            last_error: self.last_embed_error.lock().ok().and_then(|e| e.clone()),
        })
    }
}
