//! The audit log (administrators only), a page at a time.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{AuditItem, Page};

/// Recorded actions, newest first; `action` (an action or its group, `agent` for `agent.*`) and
/// `actor` (an email, or `cli`) filter.
#[server]
pub async fn audit_log(
    #[server(default)] action: Option<String>,
    #[server(default)] actor: Option<String>,
    page: i64,
) -> Result<Page<AuditItem>, ConsoleError> {
    use super::paging::{Paging, filter};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let paging = Paging::new(page);
    let (action, actor) = (filter(action), filter(actor));
    let (rows, total) = parley_engine::store::audit::list(
        state.engine.db(),
        action.as_deref(),
        actor.as_deref(),
        paging.offset(),
        paging.limit(),
    )
    .await?;
    Ok(paging.of(
        rows.into_iter()
            .map(|e| AuditItem { at: e.at, actor: e.actor, action: e.action, target: e.target, detail: e.detail })
            .collect(),
        total,
    ))
}
