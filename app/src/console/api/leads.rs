//! Leads: who asked to be contacted.

use leptos::prelude::*;

use crate::console::types::{LeadItem, Page};

#[server]
pub async fn leads(status: Option<String>, page: i64) -> Result<Page<LeadItem>, ServerFnError> {
    let (state, _) = super::access::require(false).await?;
    let per_page = 25;
    let page = page.max(1);
    let status = status.filter(|s| !s.is_empty());
    let (rows, total) =
        crate::server::store::leads::page(state.engine.db(), status.as_deref(), (page - 1) * per_page, per_page)
            .await
            .map_err(super::access::internal)?;
    Ok(Page {
        items: rows
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
            .collect(),
        total,
        page,
        per_page,
    })
}

#[server]
pub async fn update_lead(id: String, status: String, notes: String) -> Result<(), ServerFnError> {
    use crate::server::store::leads;
    let (state, _) = super::access::require(false).await?;
    if !leads::STATUSES.contains(&status.as_str()) {
        return Err(ServerFnError::new("unknown status"));
    }
    if notes.chars().count() > 5000 {
        return Err(ServerFnError::new("notes are too long (5000 characters at most)"));
    }
    let done = leads::update(state.engine.db(), &id, &status, &notes, state.engine.now_ms())
        .await
        .map_err(super::access::internal)?;
    if done { Ok(()) } else { Err(ServerFnError::new("not found")) }
}
