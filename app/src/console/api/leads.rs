//! Leads: who asked to be contacted.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
use crate::console::types::{LeadItem, Page};

/// Leads a page at a time, newest first; `status` filters (empty: all).
#[server]
pub async fn leads(status: Option<String>, page: i64) -> Result<Page<LeadItem>, ConsoleError> {
    use super::paging::{Paging, filter};
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let paging = Paging::new(page);
    let status = filter(status);
    let visible_to = state.engine.visible_to(&user).await?;
    let (rows, total) = parley_engine::store::leads::page(
        state.engine.db(),
        status.as_deref(),
        visible_to.as_deref(),
        paging.offset(),
        paging.limit(),
    )
    .await?;
    let items = rows
        .into_iter()
        .map(|l| LeadItem {
            id: l.id,
            name: l.name,
            email: l.email,
            phone: l.phone,
            message: l.message,
            status: l.status,
            notes: l.notes,
            created_at: l.created_at,
            conversation_id: l.conversation_id,
        })
        .collect();
    Ok(paging.of(items, total))
}

/// Sets a lead's status and notes.
#[server]
pub async fn update_lead(id: String, status: String, notes: String) -> Result<(), ConsoleError> {
    use parley_engine::store::leads;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    // An operator in a team changes only the leads of conversations they may see.
    let conversation = leads::conversation_of(state.engine.db(), &id).await?.ok_or(ConsoleError::NotFound)?;
    if !state.engine.may_see(&user, &conversation).await? {
        return Err(ConsoleError::NotFound);
    }
    if !leads::STATUSES.contains(&status.as_str()) {
        return Err(ConsoleError::invalid("status", "unknown status"));
    }
    if notes.chars().count() > 5000 {
        return Err(ConsoleError::invalid("notes", "notes are too long (5000 characters at most)"));
    }
    let done = leads::update(state.engine.db(), &id, &status, &notes, state.engine.now_ms()).await?;
    if done { Ok(()) } else { Err(ConsoleError::NotFound) }
}
