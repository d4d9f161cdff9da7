//! The operator's copilot (issue 43, part 7; `engine::copilot`): the hand-over summary written
//! again, a reply drafted from the knowledge base, and the operator's draft improved, shortened or
//! translated. For anyone who may see the conversation; the drafts go to the reply box, never to
//! the visitor. The audit log records which help was asked for, never the text.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
use crate::console::types::{AssistItem, SummaryItem};

#[cfg(feature = "ssr")]
fn copilot_error(e: parley_engine::engine::copilot::CopilotError) -> ConsoleError {
    use parley_engine::engine::copilot::CopilotError;
    match e {
        CopilotError::NotFound => ConsoleError::NotFound,
        CopilotError::Invalid(why) => ConsoleError::invalid("draft", why),
        e @ (CopilotError::Budget(_) | CopilotError::Provider(_)) => ConsoleError::Conflict(e.to_string()),
        CopilotError::Db(e) => ConsoleError::internal(e),
    }
}

#[cfg(feature = "ssr")]
pub(crate) fn summary_item(s: parley_engine::store::copilot::HandoffSummary) -> SummaryItem {
    let note = (s.model == "demo").then(|| parley_engine::engine::copilot::demo_note("summary").to_owned());
    SummaryItem { text: s.text, model: s.model, created_at: s.created_at, note }
}

#[cfg(feature = "ssr")]
async fn allowed(id: &str) -> Result<ConsoleUser, ConsoleError> {
    let who = ConsoleUser::extract().await?;
    if !who.state.engine.may_see(&who.user, id).await? {
        return Err(ConsoleError::NotFound);
    }
    Ok(who)
}

/// Writes the conversation's summary again (it was written when the conversation was handed over).
#[server]
pub async fn copilot_summary(id: String) -> Result<SummaryItem, ConsoleError> {
    let ConsoleUser { state, user } = allowed(&id).await?;
    let summary = state.engine.copilot_summary(&id).await.map_err(copilot_error)?;
    state.engine.audit(Some(&user), "conversation.copilot", Some(&id), "summary").await;
    Ok(summary_item(summary))
}

/// A reply to the visitor's last message drafted from the agent's knowledge, with its sources.
#[server]
pub async fn copilot_suggest(id: String) -> Result<AssistItem, ConsoleError> {
    let ConsoleUser { state, user } = allowed(&id).await?;
    let assist = state.engine.copilot_suggest(&id).await.map_err(copilot_error)?;
    state.engine.audit(Some(&user), "conversation.copilot", Some(&id), "suggest").await;
    Ok(assist_item(assist))
}

/// The operator's draft rewritten: `how` is `improve`, `shorten` or `translate`.
#[server]
pub async fn copilot_rewrite(id: String, draft: String, how: String) -> Result<AssistItem, ConsoleError> {
    use parley_engine::engine::copilot::Rewrite;
    let Some(rewrite) = Rewrite::parse(&how) else {
        return Err(ConsoleError::invalid("how", "improve, shorten or translate"));
    };
    let ConsoleUser { state, user } = allowed(&id).await?;
    let assist = state.engine.copilot_rewrite(&id, &draft, rewrite).await.map_err(copilot_error)?;
    state.engine.audit(Some(&user), "conversation.copilot", Some(&id), rewrite.as_str()).await;
    Ok(assist_item(assist))
}

#[cfg(feature = "ssr")]
fn assist_item(a: parley_engine::engine::copilot::Assist) -> AssistItem {
    AssistItem {
        text: a.text,
        citations: a.citations.into_iter().map(|c| (c.title, c.url)).collect(),
        cost_usd: a.cost_usd,
        note: a.note,
    }
}
