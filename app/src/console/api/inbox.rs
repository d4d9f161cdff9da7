//! The team inbox (issue 43): the views' counts, assignment, notes, labels, teams and colleagues.
//! Operators assign, note and label what they may see; admins define teams, labels and limits.
//! Lists of ids travel comma-separated.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::{AdminUser, ConsoleUser};
#[cfg(feature = "ssr")]
use super::conversations::takeover_error;
use crate::console::error::ConsoleError;
use crate::console::types::{Colleague, LabelTag, TeamItem, ViewCounts};

/// `a,b,,c` → `[a, b, c]`.
#[cfg(feature = "ssr")]
fn ids(list: &str) -> Vec<String> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// How many conversations that need a person each view holds for the asking user.
#[server]
pub async fn inbox_counts() -> Result<ViewCounts, ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let c = state.engine.inbox_counts(&user).await?;
    Ok(ViewCounts { mine: c.mine, unassigned: c.unassigned, my_teams: c.my_teams, all: c.all })
}

/// Assigns the conversation to the console user `to` (empty: unassigns it).
#[server]
pub async fn assign(id: String, #[server(default)] to: Option<String>) -> Result<(), ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let to = to.filter(|t| !t.trim().is_empty());
    state.engine.assign(&id, &user, to.as_deref()).await.map_err(takeover_error)?;
    let (action, detail) = match &to {
        Some(to) => ("conversation.assign", format!("to {to}")),
        None => ("conversation.unassign", String::new()),
    };
    state.engine.audit(Some(&user), action, Some(&id), &detail).await;
    Ok(())
}

/// Hands the conversation to a team's queue (empty: to no team), unassigned.
#[server]
pub async fn hand_to_team(id: String, #[server(default)] team: Option<String>) -> Result<(), ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let team = team.filter(|t| !t.trim().is_empty());
    state.engine.hand_to_team(&id, &user, team.as_deref()).await.map_err(takeover_error)?;
    let detail = team.as_deref().map(|t| format!("to team {t}")).unwrap_or_default();
    state.engine.audit(Some(&user), "conversation.team", Some(&id), &detail).await;
    Ok(())
}

/// Adds a private note (`mentions`: the ids of the colleagues picked in the `@` menu); its id.
#[server]
pub async fn add_note(id: String, body: String, #[server(default)] mentions: String) -> Result<String, ConsoleError> {
    use parley_engine::engine::takeover::TakeoverError;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let note = state.engine.add_note(&id, &user, &body, &ids(&mentions)).await.map_err(|e| match e {
        TakeoverError::Refused(why) => ConsoleError::invalid("body", why),
        e => takeover_error(e),
    })?;
    // Who wrote a note where, never what.
    state.engine.audit(Some(&user), "conversation.note", Some(&id), &format!("note {note}")).await;
    Ok(note)
}

/// Every label, by name.
#[server]
pub async fn labels() -> Result<Vec<LabelTag>, ConsoleError> {
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    let all = parley_engine::store::labels::list(state.engine.db()).await?;
    Ok(all.into_iter().map(|l| LabelTag { id: l.id, name: l.name, color: l.color }).collect())
}

/// Makes the conversation's labels exactly `labels` (label ids).
#[server]
pub async fn set_conversation_labels(id: String, #[server(default)] labels: String) -> Result<(), ConsoleError> {
    use parley_engine::engine::takeover::TakeoverError;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let changed = state.engine.set_labels(&id, &user, &ids(&labels)).await.map_err(|e| match e {
        TakeoverError::Refused(why) => ConsoleError::invalid("labels", why),
        e => takeover_error(e),
    })?;
    if !changed.added.is_empty() || !changed.removed.is_empty() {
        let detail = format!("+{} -{}", changed.added.join(";"), changed.removed.join(";"));
        state.engine.audit(Some(&user), "conversation.labels", Some(&id), &detail).await;
    }
    Ok(())
}

/// Creates (`id` empty) or changes a label (admins); its id.
#[server]
pub async fn save_label(
    #[server(default)] id: Option<String>,
    name: String,
    color: String,
) -> Result<String, ConsoleError> {
    use parley_engine::store::labels::{self, SaveError};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let name = labels::name(&name).map_err(|e| ConsoleError::invalid("name", e))?;
    let color = labels::color(&color).map_err(|e| ConsoleError::invalid("color", e))?;
    let id = id.filter(|i| !i.trim().is_empty());
    let saved = labels::save(state.engine.db(), id.as_deref(), &name, &color, state.engine.now_ms()).await.map_err(
        |e| match e {
            SaveError::NameTaken => ConsoleError::invalid("name", "Another label has this name."),
            SaveError::NotFound => ConsoleError::NotFound,
            SaveError::Db(e) => e.into(),
        },
    )?;
    state.engine.audit(Some(&user), "label.save", Some(&saved), &name).await;
    Ok(saved)
}

/// Deletes a label (admins); it comes off every conversation.
#[server]
pub async fn delete_label(id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    if !parley_engine::store::labels::delete(state.engine.db(), &id).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.audit(Some(&user), "label.delete", Some(&id), "").await;
    Ok(())
}

/// Every team with its members and agents (any console user: the assign box lists them).
#[server]
pub async fn teams() -> Result<Vec<TeamItem>, ConsoleError> {
    use parley_engine::store::teams;
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    let db = state.engine.db();
    let mut out = Vec::new();
    for t in teams::list(db).await? {
        let members = teams::members(db, &t.id).await?;
        let agents = teams::agents(db, &t.id).await?;
        out.push(TeamItem { id: t.id, name: t.name, mode: t.assign_mode, members, agents });
    }
    Ok(out)
}

/// Creates (`id` empty) or rewrites a team (admins): name, mode (`manual`/`auto`), members and
/// agents (comma-separated ids; an agent listed leaves its former team); its id.
#[server]
pub async fn save_team(
    #[server(default)] id: Option<String>,
    name: String,
    mode: String,
    #[server(default)] members: String,
    #[server(default)] agents: String,
) -> Result<String, ConsoleError> {
    use parley_engine::store::teams::{self, SaveError, TeamForm};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let name = teams::name(&name).map_err(|e| ConsoleError::invalid("name", e))?;
    let mode = teams::mode(&mode).map_err(|e| ConsoleError::invalid("mode", e))?;
    let (members, agents) = (ids(&members), ids(&agents));
    let form = TeamForm { name: &name, mode, members: &members, agents: &agents };
    let id = id.filter(|i| !i.trim().is_empty());
    let saved =
        teams::save(state.engine.db(), id.as_deref(), &form, state.engine.now_ms()).await.map_err(|e| match e {
            SaveError::NameTaken => ConsoleError::invalid("name", "Another team has this name."),
            SaveError::NotFound => ConsoleError::NotFound,
            SaveError::Unknown("agent") => ConsoleError::invalid("agents", "No such agent."),
            SaveError::Unknown(_) => ConsoleError::invalid("members", "No such console user."),
            SaveError::Db(e) => e.into(),
        })?;
    state.engine.audit(Some(&user), "team.save", Some(&saved), &name).await;
    // An automatic team's queue may go out now.
    state.engine.assign_waiting().await;
    Ok(saved)
}

/// Deletes a team (admins); its conversations go back to no team.
#[server]
pub async fn delete_team(id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    if !parley_engine::store::teams::delete(state.engine.db(), &id).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.audit(Some(&user), "team.delete", Some(&id), "").await;
    Ok(())
}

/// Every console user with their presence and load (the assign box, the `@` menu).
#[server]
pub async fn colleagues() -> Result<Vec<Colleague>, ConsoleError> {
    use parley_engine::store::hours::ONLINE_WITHIN_MS;
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    let rows = parley_engine::store::assignment::loads(state.engine.db()).await?;
    let online_after = state.engine.now_ms() - ONLINE_WITHIN_MS;
    Ok(rows
        .into_iter()
        .map(|l| {
            let presence = match (l.away != 0, l.last_seen_at.is_some_and(|s| s >= online_after)) {
                (true, _) => "away",
                (false, true) => "online",
                (false, false) => "offline",
            };
            Colleague { id: l.id, name: l.name, presence: presence.into(), open: l.open, max_open: l.max_open }
        })
        .collect())
}

/// Sets the most open conversations automatic assignment gives a console user (admins; 0 to 100).
#[server]
pub async fn set_limit(user_id: String, max_open: i64) -> Result<(), ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    if !(0..=100).contains(&max_open) {
        return Err(ConsoleError::invalid("max_open", "A limit from 0 to 100."));
    }
    if !parley_engine::store::assignment::set_limit(state.engine.db(), &user_id, max_open).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.audit(Some(&user), "user.limit", Some(&user_id), &max_open.to_string()).await;
    state.engine.assign_waiting().await;
    Ok(())
}
