//! Summarising older turns before the answer (seed 003's compaction): a model call like any —
//! held, in the ledger, with a `usage` event — whose summary is stored on the conversation.

use super::super::context::Compaction;
use super::super::provider::ModelRequest;
use super::Stop;
use super::call::Caller;
use crate::store::conversations;
use tokio_util::sync::CancellationToken;

/// The summary, stored; `Ok(None)` when none came; `Err` when the turn must end.
pub(super) async fn summarise(
    call: &Caller<'_>,
    model_name: &str,
    compaction: &Compaction,
    cancel: &CancellationToken,
) -> Result<Option<String>, Stop> {
    let request = ModelRequest {
        model: model_name.to_owned(),
        messages: compaction.request.clone(),
        tools: Vec::new(),
        max_tokens: Some(600),
    };
    let mut summary = String::new();
    let outcome = tokio::select! {
        _ = cancel.cancelled() => Err(Stop::Aborted),
        r = call.model_call(request, None, &mut summary) => r,
    };
    match outcome {
        Ok(_) if !summary.trim().is_empty() => {
            let summary = summary.trim().to_owned();
            let ctx = call.ctx;
            if let Err(e) = conversations::set_summary(&ctx.db, &ctx.conversation_id, &summary, compaction.until).await
            {
                tracing::warn!(conversation = %ctx.conversation_id, error = %e, "could not store the summary");
            }
            Ok(Some(summary))
        }
        Ok(_) => Ok(None),
        Err(Stop::Provider(e)) => {
            tracing::warn!(code = e.code(), "summarising older turns failed");
            Ok(None)
        }
        Err(stop) => Err(stop),
    }
}
