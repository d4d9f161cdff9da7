//! The dashboard's figures.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
use crate::console::types::Dashboard;

/// Today's counts, 30 days of tokens and cost, and the questions asked most in them.
#[server]
pub async fn dashboard_figures() -> Result<Dashboard, ConsoleError> {
    use std::collections::{BTreeMap, HashMap};

    use crate::console::types::DayUsage;
    use parley_engine::store::console as q;
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    let db = state.engine.db();
    let now = state.engine.now_ms();
    let day_ms = 86_400_000;
    let today = now - now.rem_euclid(day_ms);
    let since = today - 29 * day_ms;
    let mut days: BTreeMap<i64, (i64, f64)> = (0..30).map(|i| (since + i * day_ms, (0, 0.0))).collect();
    for (at, tokens, cost) in q::usage_since(db, since).await? {
        let entry = days.entry(at - at.rem_euclid(day_ms)).or_default();
        entry.0 += tokens;
        entry.1 += cost;
    }
    let mut counts: HashMap<String, (String, i64)> = HashMap::new();
    for text in q::visitor_texts_since(db, since, 5000).await? {
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
    let c = q::counts(db, today).await?;
    let spent: HashMap<String, f64> =
        parley_engine::store::usage::spend_by_agent_since(db, today).await?.into_iter().collect();
    let prices = state.engine.prices();
    let default_cap = state.engine.settings().spend.agent_daily_cap_usd;
    let agents = parley_engine::store::agents::list(db).await?;
    let week = 7 * day_ms;
    let this_week = parley_engine::store::ratings::tally(db, now - week, now + 1).await?;
    let week_before = parley_engine::store::ratings::tally(db, now - 2 * week, now - week).await?;
    let ratings = agents
        .iter()
        .filter_map(|a| {
            let now_t = this_week.iter().find(|t| t.agent_id == a.id).cloned().unwrap_or_default();
            let before = week_before.iter().find(|t| t.agent_id == a.id).cloned().unwrap_or_default();
            let any = now_t.up + now_t.down + now_t.conversations + before.up + before.down > 0;
            any.then(|| crate::console::types::AgentRatings {
                agent_id: a.id.clone(),
                name: a.name.clone(),
                up: now_t.up,
                down: now_t.down,
                up_before: before.up,
                down_before: before.down,
                conversations: now_t.conversations,
                average: (now_t.conversations > 0)
                    .then(|| now_t.conversation_score as f64 / now_t.conversations as f64),
            })
        })
        .collect();
    let names: HashMap<String, String> = agents.iter().map(|a| (a.id.clone(), a.name.clone())).collect();
    let teasers = parley_engine::store::engage::counts_since(db, since)
        .await?
        .into_iter()
        .map(|(agent, trigger, shown, clicked)| crate::console::types::TeaserCount {
            agent: names.get(&agent).cloned().unwrap_or(agent),
            trigger,
            shown,
            clicked,
        })
        .collect();
    let alerts = parley_engine::store::alerts::since(db, now - week)
        .await?
        .into_iter()
        .map(|a| crate::console::types::AlertItem {
            agent: names.get(&a.agent_id).cloned().unwrap_or_else(|| a.agent_id.clone()),
            kind: a.kind,
            detail: a.detail,
            at: chrono::DateTime::from_timestamp_millis(a.created_at)
                .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default(),
        })
        .collect();
    let spend_today = agents
        .into_iter()
        .map(|a| crate::console::types::AgentSpend {
            spent_usd: spent.get(&a.id).copied().unwrap_or(0.0),
            cap_usd: a.limits.daily_cap_usd.or(default_cap),
            unpriced: !prices.is_priced(&a.provider.model),
            agent_id: a.id,
            name: a.name,
            model: a.provider.model,
        })
        .collect();
    Ok(Dashboard {
        alerts,
        teasers,
        ratings,
        spend_today,
        unpriced: crate::console::api::agents::unpriced_price(&state),
        conversations_today: c.conversations_today,
        messages_today: c.messages_today,
        leads_waiting: c.leads_waiting,
        orders_paid: c.orders_paid,
        orders_paid_today: c.orders_paid_today,
        waiting_for_human: c.waiting_for_human,
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
