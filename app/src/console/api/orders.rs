//! Payment orders.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
use crate::console::types::{OrderItem, Page};

/// An order's facts (a JSON object) as `key: value` lines, in the order they were stored.
#[cfg(feature = "ssr")]
fn fact_lines(facts: Option<&str>) -> Vec<String> {
    let Some(serde_json::Value::Object(map)) = facts.and_then(|f| serde_json::from_str(f).ok()) else {
        return Vec::new();
    };
    map.into_iter()
        .map(|(key, value)| match value {
            serde_json::Value::String(s) => format!("{key}: {s}"),
            other => format!("{key}: {other}"),
        })
        .collect()
}

/// Orders a page at a time, newest first; `status` filters (empty: all).
#[server]
pub async fn orders(status: Option<String>, page: i64) -> Result<Page<OrderItem>, ConsoleError> {
    use super::paging::{Paging, filter};
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let paging = Paging::new(page);
    let status = filter(status);
    let visible_to = state.engine.visible_to(&user).await?;
    let db = state.engine.db();
    let (rows, total) = parley_engine::store::console::orders(
        db,
        status.as_deref(),
        visible_to.as_deref(),
        paging.offset(),
        paging.limit(),
    )
    .await?;
    let now = state.engine.now_ms();
    let items = rows
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
            facts: fact_lines(o.facts.as_deref()),
        })
        .collect();
    Ok(paging.of(items, total))
}
