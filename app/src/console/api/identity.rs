//! Known visitors (administrators only): an agent's identity settings, its secrets (made and
//! rotated here, shown once) and the host site's users it has met.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
#[cfg(feature = "ssr")]
use crate::console::types::FieldError;
use crate::console::types::{IdentityView, NewIdentitySecret};

/// Users listed at most.
#[cfg(feature = "ssr")]
const USERS: i64 = 200;

/// An agent's identity settings, secrets and users.
#[server]
pub async fn agent_identity(agent_id: String) -> Result<IdentityView, ConsoleError> {
    use crate::console::types::{SecretItem, UserItem, UserLabel};
    use parley_engine::store::{agents, identity};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let now = state.engine.now_ms();
    let secrets = identity::list_secrets(db, &agent.id).await?;
    let users = identity::list_users(db, &agent.id, USERS).await?;
    Ok(IdentityView {
        agent_id: agent.id,
        agent_key: agent.public_key,
        required: agent.identity.required,
        max_age_minutes: agent.identity.max_age_secs / 60,
        retention_days: agent.identity.retention_days,
        secrets: secrets
            .into_iter()
            .map(|s| SecretItem {
                accepted: s.expires_at.is_none_or(|at| at > now),
                id: s.id,
                prefix: s.prefix,
                created_at: s.created_at,
                expires_at: s.expires_at,
            })
            .collect(),
        users: users
            .into_iter()
            .map(|u| UserItem {
                user: UserLabel { id: u.subject, name: u.name, email: u.email },
                conversations: u.conversations,
                created_at: u.created_at,
                last_seen_at: u.last_seen_at,
            })
            .collect(),
    })
}

/// Stores whether the agent requires identity, the longest token lifetime it accepts, and how
/// many days conversations are kept (empty: for ever).
#[server]
pub async fn save_identity(
    agent_id: String,
    #[server(default)] required: bool,
    max_age_minutes: String,
    #[server(default)] retention_days: String,
) -> Result<(), ConsoleError> {
    use parley_engine::store::agents::{IDENTITY_MAX_AGES, IdentitySettings, RETENTION_DAYS};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let (lo, hi) = (IDENTITY_MAX_AGES.start() / 60, IDENTITY_MAX_AGES.end() / 60);
    let minutes: Option<i64> = max_age_minutes.trim().parse().ok().filter(|m| (lo..=hi).contains(m));
    let retention = match retention_days.trim() {
        "" => Ok(None),
        days => days.parse::<i64>().ok().filter(|d| RETENTION_DAYS.contains(d)).map(Some).ok_or(()),
    };
    let mut errors = Vec::new();
    if minutes.is_none() {
        errors.push(FieldError::new("max_age_minutes", format!("A whole number of minutes from {lo} to {hi}.")));
    }
    if retention.is_err() {
        let (lo, hi) = (RETENTION_DAYS.start(), RETENTION_DAYS.end());
        errors.push(FieldError::new(
            "retention_days",
            format!("Empty (keep), or a whole number of days from {lo} to {hi}."),
        ));
    }
    let (Some(minutes), Ok(retention_days)) = (minutes, retention) else { return Err(ConsoleError::Invalid(errors)) };
    let settings = IdentitySettings { required, max_age_secs: minutes * 60, retention_days };
    if !state.engine.set_identity_settings(&agent_id, &settings).await? {
        return Err(ConsoleError::NotFound);
    }
    let detail = format!(
        "required {required}, max lifetime {minutes} min, retention {}",
        retention_days.map_or("none".to_owned(), |d| format!("{d} days"))
    );
    state.engine.audit(Some(&user), "identity.settings", Some(&agent_id), &detail).await;
    Ok(())
}

/// Makes a new identity secret for the agent (the first one, or a rotation: the one it replaces
/// is accepted `grace_hours` more). The answer holds the secret, shown once.
#[server]
pub async fn rotate_identity_secret(agent_id: String, grace_hours: String) -> Result<NewIdentitySecret, ConsoleError> {
    use parley_engine::engine::identity::MAX_GRACE_HOURS;
    use parley_engine::store::{agents, identity};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let grace_hours: i64 =
        grace_hours.trim().parse().ok().filter(|h| (0..=MAX_GRACE_HOURS).contains(h)).ok_or_else(|| {
            ConsoleError::invalid("grace_hours", format!("A whole number of hours from 0 to {MAX_GRACE_HOURS}."))
        })?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let replaced = identity::list_secrets(db, &agent.id).await?.iter().any(|s| s.expires_at.is_none());
    let (info, secret) = state.engine.rotate_identity_secret(&agent.id, grace_hours).await?;
    let detail = format!("{}… (the previous one accepted {grace_hours} h more)", info.prefix);
    state.engine.audit(Some(&user), "identity.secret", Some(&agent.public_key), &detail).await;
    Ok(NewIdentitySecret { secret, agent_key: agent.public_key, grace_hours: if replaced { grace_hours } else { 0 } })
}

/// Whom an export or a deletion is about: `visitor` (a visitor id, as the conversations show it),
/// or `user` (the website's user id) of `agent_id`.
#[cfg(feature = "ssr")]
fn person(
    agent_id: String,
    user: String,
    visitor: String,
) -> Result<parley_engine::engine::privacy::Person, ConsoleError> {
    parley_engine::engine::privacy::Person::named(&agent_id, &user, &visitor)
        .ok_or_else(|| ConsoleError::invalid("user", "Name a visitor, or a user of an agent."))
}

/// Everything stored about a person, as JSON text (the page offers it as a download).
#[server]
pub async fn export_person(
    #[server(default)] agent_id: String,
    #[server(default)] user: String,
    #[server(default)] visitor: String,
) -> Result<String, ConsoleError> {
    let AdminUser { state, user: me } = AdminUser::extract().await?;
    let who = person(agent_id, user, visitor)?;
    let data = state.engine.export_person(&who).await?.ok_or(ConsoleError::NotFound)?;
    state.engine.audit(Some(&me), "person.export", Some(&who.audit_label()), "").await;
    serde_json::to_string_pretty(&data).map_err(ConsoleError::internal)
}

/// Deletes everything about a person; the answer is how many conversations went.
#[server]
pub async fn delete_person(
    #[server(default)] agent_id: String,
    #[server(default)] user: String,
    #[server(default)] visitor: String,
) -> Result<u64, ConsoleError> {
    let AdminUser { state, user: me } = AdminUser::extract().await?;
    let who = person(agent_id, user, visitor)?;
    let deleted = state.engine.delete_person(&who).await?.ok_or(ConsoleError::NotFound)?;
    let detail = format!("{} conversations, {} rows", deleted.conversations, deleted.rows);
    state.engine.audit(Some(&me), "person.delete", Some(&who.audit_label()), &detail).await;
    Ok(deleted.conversations)
}
