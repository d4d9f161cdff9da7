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
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    let paging = Paging::new(page);
    let status = filter(status);
    let (rows, total) =
        parley_engine::store::leads::page(state.engine.db(), status.as_deref(), paging.offset(), paging.limit())
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
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    if !leads::STATUSES.contains(&status.as_str()) {
        return Err(ConsoleError::invalid("status", "unknown status"));
    }
    if notes.chars().count() > 5000 {
        return Err(ConsoleError::invalid("notes", "notes are too long (5000 characters at most)"));
    }
    let done = leads::update(state.engine.db(), &id, &status, &notes, state.engine.now_ms()).await?;
    if done { Ok(()) } else { Err(ConsoleError::NotFound) }
}
