//! The dashboard's figures.

use leptos::prelude::*;

use crate::console::types::Dashboard;

#[server]
pub async fn dashboard_figures() -> Result<Dashboard, ServerFnError> {
    use std::collections::{BTreeMap, HashMap};

    use crate::console::types::DayUsage;
    use crate::server::store::console as q;
    let (state, _) = super::access::require(false).await?;
    let db = state.engine.db();
    let now = state.engine.now_ms();
    let day_ms = 86_400_000;
    let today = now - now.rem_euclid(day_ms);
    let e = super::access::internal;
    let since = today - 29 * day_ms;
    let mut days: BTreeMap<i64, (i64, f64)> = (0..30).map(|i| (since + i * day_ms, (0, 0.0))).collect();
    for (at, tokens, cost) in q::usage_since(db, since).await.map_err(e)? {
        let entry = days.entry(at - at.rem_euclid(day_ms)).or_default();
        entry.0 += tokens;
        entry.1 += cost;
    }
    let mut counts: HashMap<String, (String, i64)> = HashMap::new();
    for text in q::visitor_texts_since(db, since, 5000).await.map_err(e)? {
        let key: String = text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        if key.is_empty() {
            continue;
        }
        let shown: String = text.trim().chars().take(120).collect();
        counts.entry(key).or_insert((shown, 0)).1 += 1;
    }
    let mut top: Vec<(String, i64)> = counts.into_values().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(10);
    Ok(Dashboard {
        conversations_today: q::count_since(db, "conversations", today).await.map_err(e)?,
        messages_today: q::count_since(db, "messages", today).await.map_err(e)?,
        leads_waiting: q::count_where(db, "SELECT COUNT(*) FROM leads WHERE status = 'new'").await.map_err(e)?,
        orders_paid: q::count_where(db, "SELECT COUNT(*) FROM orders WHERE status = 'paid'").await.map_err(e)?,
        orders_paid_today: {
            let paid: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE status = 'paid' AND paid_at >= $1")
                .bind(today)
                .fetch_one(&mut *db.read().await.map_err(e)?)
                .await
                .map_err(e)?;
            paid
        },
        waiting_for_human: q::count_where(db, "SELECT COUNT(*) FROM conversations WHERE status = 'waiting_human'")
            .await
            .map_err(e)?,
        days: days
            .into_iter()
            .map(|(at, (tokens, cost))| DayUsage {
                day: chrono::DateTime::from_timestamp_millis(at)
                    .map(|d| d.format("%Y-%m-%d").to_string())
                    .unwrap_or_default(),
                tokens,
                cost_usd: cost,
            })
            .collect(),
        top_questions: top,
    })
}
