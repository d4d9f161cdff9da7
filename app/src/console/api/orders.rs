//! Payment orders.

use leptos::prelude::*;

use crate::console::types::{OrderItem, Page};

#[server]
pub async fn orders(status: Option<String>, page: i64) -> Result<Page<OrderItem>, ServerFnError> {
    let (state, _) = super::access::require(false).await?;
    let per_page = 25;
    let page = page.max(1);
    let status = status.filter(|s| !s.is_empty());
    let (rows, total) =
        crate::server::store::console::orders(state.engine.db(), status.as_deref(), (page - 1) * per_page, per_page)
            .await
            .map_err(super::access::internal)?;
    let now = state.engine.now_ms();
    Ok(Page {
        items: rows
            .into_iter()
            .map(|o| OrderItem {
                // A pending order past its time is expired even before the sweeper runs.
                status: if o.status == "pending" && o.expires_at <= now { "expired".into() } else { o.status },
                amount: parley_widget::protocol::format_amount(o.amount_minor, &o.currency),
                id: o.id,
                category: o.category,
                method: o.method,
                created_at: o.created_at,
                conversation_id: o.conversation_id,
            })
            .collect(),
        total,
        page,
        per_page,
    })
}
