//! An agent's drafts, publishing and history (administrators only). The draft holds changes
//! to the agent's behaviour (instructions, model, fallback model, capabilities, tools) while
//! visitors keep getting the published version; publishing and restoring record a new version.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{AgentForm, VersionOutcome, VersionsView};

/// The versions page: the draft (or the published behaviour), its differences, the history.
#[server]
pub async fn agent_versions(id: String) -> Result<VersionsView, ConsoleError> {
    use parley_engine::store::agents::{self, versions};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &id).await?.ok_or(ConsoleError::NotFound)?;
    let live = versions::Behaviour::of(&agent);
    let draft = versions::draft(db, &id).await?;
    let stored = versions::list(db, &id).await?;
    let history = if stored.is_empty() {
        // Nothing changed since versions were kept: the agent as it is is version 1.
        vec![ssr::item_of(
            &versions::Version {
                version: agent.version,
                behaviour: live.clone(),
                published_by: None,
                published_at: 0,
                note: "The first version".into(),
                changes: String::new(),
                restored_from: None,
            },
            None,
        )]
    } else {
        stored.iter().enumerate().map(|(i, v)| ssr::item_of(v, stored.get(i + 1).map(|p| &p.behaviour))).collect()
    };
    let shown = draft.as_ref().map_or(&live, |d| &d.behaviour);
    Ok(VersionsView {
        form: ssr::form_of(shown),
        draft: draft.as_ref().map(|d| crate::console::types::DraftInfo {
            base_version: d.base_version,
            updated_by: d.updated_by.clone(),
            updated_at: d.updated_at,
            diff: ssr::diff(&live, &d.behaviour),
        }),
        published: agent.version,
        agent_id: agent.id,
        agent_name: agent.name,
        history,
        tools: super::agents::catalogue(&state),
    })
}

/// Saves the draft (field errors come back and nothing is written).
#[server(input = Json)]
pub async fn save_agent_draft(id: String, form: AgentForm) -> Result<VersionOutcome, ConsoleError> {
    use parley_engine::store::agents::{self, versions};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &id).await?.ok_or(ConsoleError::NotFound)?;
    let input = versions::BehaviourInput {
        system_prompt: form.system_prompt,
        model: form.model,
        fallback_model: form.fallback_model,
        capabilities: form.capabilities,
        enabled_tools: form.enabled_tools,
    };
    let behaviour = match versions::Behaviour::parse(&input, &state.engine.catalogue()) {
        Ok(b) => b,
        Err(errors) => return Ok(VersionOutcome { ok: false, message: String::new(), errors }),
    };
    versions::save_draft(db, &agent, &behaviour, Some(&user.email), state.engine.now_ms()).await?;
    let changes = versions::Behaviour::of(&agent);
    let changed = behaviour.changes_from(&changes);
    let message = if changed.is_empty() {
        "Draft saved: it is the same as the published version.".to_owned()
    } else {
        format!("Draft saved ({} changed). Visitors still get version {}.", changed.join(", "), agent.version)
    };
    Ok(VersionOutcome { ok: true, message, errors: vec![] })
}

/// Throws the draft away.
#[server]
pub async fn discard_agent_draft(id: String) -> Result<VersionOutcome, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let found = parley_engine::store::agents::versions::discard_draft(state.engine.db(), &id).await?;
    let message = if found { "Draft discarded." } else { "There was no draft." };
    Ok(VersionOutcome { ok: found, message: message.into(), errors: vec![] })
}

/// Publishes the draft as the next version, with an optional note.
#[server]
pub async fn publish_agent_draft(id: String, note: String) -> Result<VersionOutcome, ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    let note: String = note.chars().take(500).collect();
    let now = state.engine.now_ms();
    let result =
        parley_engine::store::agents::versions::publish_draft(state.engine.db(), &id, Some(&user.email), &note, now)
            .await;
    ssr::finish(&state, &user, &id, "agent.publish", result).await
}

/// Publishes an earlier version's behaviour again as the next version.
#[server]
pub async fn restore_agent_version(id: String, version: i64) -> Result<VersionOutcome, ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    let now = state.engine.now_ms();
    let result =
        parley_engine::store::agents::versions::restore(state.engine.db(), &id, version, Some(&user.email), now).await;
    ssr::finish(&state, &user, &id, "agent.restore", result).await
}

#[cfg(feature = "ssr")]
pub(super) mod ssr {
    use parley_engine::store::agents::versions::{self, Behaviour, PublishError, Version};

    use crate::console::error::ConsoleError;
    use crate::console::types::{AgentForm, BehaviourDiff, DiffLine, FieldChange, VersionItem, VersionOutcome};
    use crate::server::state::AppState;

    /// A behaviour in the agent form's shape (the other fields empty).
    pub(super) fn form_of(b: &Behaviour) -> AgentForm {
        AgentForm {
            system_prompt: b.system_prompt.clone(),
            model: b.model.clone(),
            fallback_model: b.fallback_model.clone().unwrap_or_default(),
            capabilities: b.capabilities.clone(),
            enabled_tools: b.enabled_tools.clone(),
            ..AgentForm::default()
        }
    }

    pub(super) fn item_of(v: &Version, before: Option<&Behaviour>) -> VersionItem {
        VersionItem {
            version: v.version,
            published_by: v.published_by.clone(),
            published_at: v.published_at,
            note: v.note.clone(),
            changes: v.changes.clone(),
            restored_from: v.restored_from,
            diff: before.map(|b| diff(b, &v.behaviour)).unwrap_or_default(),
        }
    }

    /// `after` compared with `before`.
    pub(super) fn diff(before: &Behaviour, after: &Behaviour) -> BehaviourDiff {
        let list = |v: &[String]| if v.is_empty() { "none".to_owned() } else { v.join(", ") };
        let tools =
            |t: &Option<Vec<String>>| t.as_deref().map_or_else(|| "all the capabilities allow".to_owned(), list);
        let fallback = |f: &Option<String>| f.clone().unwrap_or_else(|| "none".into());
        let mut fields = Vec::new();
        let mut push = |label: &str, b: String, a: String| {
            if b != a {
                fields.push(FieldChange { label: label.into(), before: b, after: a });
            }
        };
        push("Model", before.model.clone(), after.model.clone());
        push("Fallback model", fallback(&before.fallback_model), fallback(&after.fallback_model));
        push("Capabilities", list(&before.capabilities), list(&after.capabilities));
        push("Tools", tools(&before.enabled_tools), tools(&after.enabled_tools));
        let prompt = if before.system_prompt == after.system_prompt {
            Vec::new()
        } else {
            text_diff(&before.system_prompt, &after.system_prompt)
        };
        BehaviourDiff { fields, prompt }
    }

    /// Two texts compared line by line (also the answer tests' answers).
    pub(in crate::console::api) fn text_diff(before: &str, after: &str) -> Vec<DiffLine> {
        versions::diff_lines(before, after)
            .into_iter()
            .map(|l| match l {
                versions::DiffLine::Same(text) => DiffLine { kind: "same".into(), text },
                versions::DiffLine::Added(text) => DiffLine { kind: "added".into(), text },
                versions::DiffLine::Removed(text) => DiffLine { kind: "removed".into(), text },
            })
            .collect()
    }

    /// After a publish or a restore: the cached agents forgotten, the audit log told, the outcome
    /// said.
    pub(super) async fn finish(
        state: &AppState,
        user: &parley_engine::store::users::User,
        id: &str,
        action: &str,
        result: Result<i64, PublishError>,
    ) -> Result<VersionOutcome, ConsoleError> {
        let version = match result {
            Ok(v) => v,
            Err(PublishError::Db(e)) => return Err(e.into()),
            Err(PublishError::NoAgent) => return Err(ConsoleError::NotFound),
            Err(other) => return Ok(VersionOutcome { ok: false, message: other.to_string(), errors: vec![] }),
        };
        state.engine.agents_changed();
        state.engine.audit(Some(user), action, Some(id), &format!("version {version}")).await;
        let message = format!("Published version {version}: visitors get it now.");
        Ok(VersionOutcome { ok: true, message, errors: vec![] })
    }
}
