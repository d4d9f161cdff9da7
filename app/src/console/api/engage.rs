//! Triggers (administrators): list, save, remove, and preview on an address (issue 44, part 1).

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{EngageView, TriggerPreview};

/// An agent's triggers in order, with their showings and clicks of the last 30 days.
#[server]
pub async fn engage_rules(agent_id: String) -> Result<EngageView, ConsoleError> {
    use crate::console::types::TriggerItem;
    use parley_engine::store::{agents, engage};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let counts = engage::counts_since(db, state.engine.now_ms() - 29 * 86_400_000).await?;
    let rules = engage::list(db, &agent.id)
        .await?
        .into_iter()
        .map(|t| {
            let (shown, clicked) = counts
                .iter()
                .find(|(a, name, ..)| *a == agent.id && *name == t.trigger.name)
                .map_or((0, 0), |(.., s, c)| (*s, *c));
            TriggerItem { trigger: t.trigger, enabled: t.enabled, shown, clicked }
        })
        .collect();
    Ok(EngageView { agent_id: agent.id, rules })
}

/// Saves a trigger: `rule` is the protocol's `Trigger` as JSON; `previous` names the trigger it
/// rewrites (empty: a new one, added last). A fault is answered with the field it is in.
#[server]
pub async fn save_trigger(
    agent_id: String,
    #[server(default)] previous: String,
    #[server(default)] enabled: bool,
    rule: String,
) -> Result<(), ConsoleError> {
    use parley_engine::store::agents;
    use parley_engine::store::engage::{self, SaveError};
    use parley_widget::protocol::Trigger;
    let AdminUser { state, user } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let trigger: Trigger =
        serde_json::from_str(&rule).map_err(|e| ConsoleError::invalid("rule", format!("not a trigger: {e}")))?;
    let trigger =
        parley_engine::engine::engage::check(trigger).map_err(|(field, why)| ConsoleError::invalid(field, why))?;
    let previous = Some(previous.trim()).filter(|p| !p.is_empty());
    match engage::save(db, &agent.id, previous, &trigger, enabled, state.engine.now_ms()).await {
        Ok(()) => {}
        Err(SaveError::Taken) => {
            return Err(ConsoleError::invalid("name", "another trigger of this agent has this name"));
        }
        Err(SaveError::NotFound) => return Err(ConsoleError::NotFound),
        Err(SaveError::Full) => {
            return Err(ConsoleError::Conflict(format!(
                "An agent has at most {} triggers.",
                parley_widget::protocol::MAX_TRIGGERS
            )));
        }
        Err(SaveError::Db(e)) => return Err(e.into()),
    }
    let what = format!("{} ({})", trigger.name, if enabled { "on" } else { "off" });
    state.engine.audit(Some(&user), "engage.save", Some(&agent.public_key), &what).await;
    Ok(())
}

/// Removes a trigger (its past figures stay on the dashboard).
#[server]
pub async fn remove_trigger(agent_id: String, name: String) -> Result<(), ConsoleError> {
    use parley_engine::store::{agents, engage};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    if !engage::remove(db, &agent.id, &name).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.audit(Some(&user), "engage.remove", Some(&agent.public_key), &name).await;
    Ok(())
}

/// Whether a trigger would show on `address`, what else it waits for, and a link that shows it
/// there at once.
#[server]
pub async fn preview_trigger(agent_id: String, name: String, address: String) -> Result<TriggerPreview, ConsoleError> {
    use parley_engine::store::{agents, engage};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let address = address.trim();
    let parsed = url::Url::parse(address)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| ConsoleError::invalid("address", "give a whole address, like https://example.com/pricing"))?;
    let stored = engage::list(db, &agent.id).await?.into_iter().find(|t| t.trigger.name == name);
    let stored = stored.ok_or(ConsoleError::NotFound)?;
    let (passes, notes) = parley_engine::engine::engage::preview(&stored.trigger, address);
    let link = stored.enabled.then(|| {
        let mut u = parsed.clone();
        u.set_fragment(Some(&format!("parley-preview={name}")));
        u.to_string()
    });
    Ok(TriggerPreview { passes, notes, link })
}
