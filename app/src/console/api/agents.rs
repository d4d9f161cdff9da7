//! Agents: list, read for editing, save (administrators only), and the names operators filter by.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
use super::access::{AdminUser, ConsoleUser};
use crate::console::error::ConsoleError;
#[cfg(feature = "ssr")]
use crate::console::types::FieldError;
use crate::console::types::{AgentForm, AgentFormData, AgentSummary, Saved, ToolInfo};

/// `(id, name)` of every agent, for filters (operators too).
#[server]
pub async fn agent_names() -> Result<Vec<(String, String)>, ConsoleError> {
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    let agents = parley_engine::store::agents::list(state.engine.db()).await?;
    Ok(agents.into_iter().map(|a| (a.id, a.name)).collect())
}

/// Every agent, for the list.
#[server]
pub async fn agents() -> Result<Vec<AgentSummary>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let agents = parley_engine::store::agents::list(state.engine.db()).await?;
    let prices = state.engine.prices();
    Ok(agents
        .into_iter()
        .map(|a| AgentSummary {
            unpriced: !prices.is_priced(&a.provider.model),
            id: a.id,
            key: a.public_key,
            name: a.name,
            vertical: a.vertical,
            provider: a.provider.kind.as_str().into(),
            model: a.provider.model,
            capabilities: a.capabilities,
        })
        .collect())
}

/// The registry's tools and the experts' tools, and the capability each needs.
#[server]
pub async fn tool_catalogue() -> Result<Vec<ToolInfo>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    Ok(catalogue(&state))
}

#[cfg(feature = "ssr")]
pub(crate) fn catalogue(state: &crate::server::state::AppState) -> Vec<ToolInfo> {
    state.engine.catalogue().into_iter().map(|(name, capability)| ToolInfo { name, capability }).collect()
}

/// What the agent form needs: the agent (a blank one for `None`) and the registry's tools, in
/// one call. (Server rendering loses the request's context after the first wait, so a page's
/// resource calls one server function, which reads the context first.)
#[server]
pub async fn agent_editor(id: Option<String>) -> Result<AgentFormData, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let form = match id {
        Some(id) => agent_form(&state, &id).await?,
        None => crate::console::agents::blank(),
    };
    let priced = state.engine.prices().is_priced(&form.model);
    Ok(AgentFormData { form, tools: catalogue(&state), unpriced: unpriced_price(&state), model_priced: priced })
}

/// The default price of unpriced models and the default daily cap, as the console shows them.
#[cfg(feature = "ssr")]
pub(crate) fn unpriced_price(state: &crate::server::state::AppState) -> crate::console::types::UnpricedPrice {
    let default = state.engine.prices().default_price();
    crate::console::types::UnpricedPrice {
        input_per_mtok: default.input_per_mtok,
        output_per_mtok: default.output_per_mtok,
        default_daily_cap_usd: state.engine.settings().spend.agent_daily_cap_usd,
    }
}

/// The agent and the URL browsers reach this server at (for the snippet).
#[server]
pub async fn embed_info(id: String) -> Result<(AgentForm, String), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let form = agent_form(&state, &id).await?;
    Ok((form, state.http.public_url.trim_end_matches('/').to_owned()))
}

/// An agent as the form shows it; the API key only as a hint.
#[server]
pub async fn agent(id: String) -> Result<AgentForm, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    agent_form(&state, &id).await
}

#[cfg(feature = "ssr")]
async fn agent_form(state: &crate::server::state::AppState, id: &str) -> Result<AgentForm, ConsoleError> {
    let a = parley_engine::store::agents::by_id(state.engine.db(), id).await?.ok_or(ConsoleError::NotFound)?;
    let domain = a.domain.to_text();
    Ok(AgentForm {
        id: Some(a.id),
        key: a.public_key,
        name: a.name,
        vertical: a.vertical,
        capabilities: a.capabilities,
        enabled_tools: a.enabled_tools,
        provider: a.provider.kind.as_str().into(),
        base_url: a.provider.base_url.unwrap_or_default(),
        api_key_hint: a.provider.api_key.as_ref().map(parley_engine::secret::ApiKey::hint),
        new_api_key: String::new(),
        model: a.provider.model,
        fallback_model: a.provider.fallback_model.unwrap_or_default(),
        system_prompt: a.system_prompt,
        greeting: a.greeting,
        text_color: a.theme.text_color.unwrap_or_default(),
        color_scheme: a.theme.scheme.as_str().into(),
        launcher_icon: a.theme.launcher_icon.as_str().into(),
        launcher_label: a.theme.launcher_label,
        panel_width: a.theme.width.to_string(),
        panel_height: a.theme.height.to_string(),
        theme_color: a.theme.color,
        launcher_position: a.theme.position,
        language: a.language.as_str().into(),
        placeholder: a.placeholder,
        starters: a.starters,
        prechat_title: a.prechat.title.clone(),
        prechat_name: a.prechat.name.as_str().into(),
        prechat_email: a.prechat.email.as_str().into(),
        prechat_phone: a.prechat.phone.as_str().into(),
        allowed_origins: a.allowed_origins,
        budget_usd: a.limits.budget_usd,
        max_turns: a.limits.max_turns.map(|n| n.to_string()).unwrap_or_default(),
        daily_cap_usd: a.limits.daily_cap_usd.map(|n| n.to_string()).unwrap_or_default(),
        max_tokens: a.limits.max_tokens.map(|n| n.to_string()).unwrap_or_default(),
        services: domain.services,
        sites: domain.sites,
        reference_news: domain.reference_news,
    })
}

/// Creates (no id) or updates an agent. Field errors come back in [`Saved::errors`] and nothing
/// is written.
#[server(input = Json)]
pub async fn save_agent(form: AgentForm) -> Result<Saved, ConsoleError> {
    use parley_engine::store::agents::{self, AgentLimits, NewAgent, SaveError};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let db = state.engine.db();
    let existing = match &form.id {
        Some(id) => Some(agents::by_id(db, id).await?.ok_or(ConsoleError::NotFound)?),
        None => None,
    };
    let parsed = NewAgent::parse(&input(&form), &state.engine.catalogue());
    let limits = AgentLimits::parse(form.budget_usd, &form.max_turns, &form.daily_cap_usd, &form.max_tokens);
    let (mut new, limits) = match (parsed, limits) {
        (Ok(new), Ok(limits)) => (new, limits),
        (new, limits) => {
            let mut errors: Vec<FieldError> =
                new.err().into_iter().chain(limits.err()).flatten().map(field_error).collect();
            // Shown with the other errors; when there are none, the insert below refuses a taken
            // key by itself.
            let key = form.key.trim();
            if errors.iter().all(|e| e.field != "key")
                && agents::by_public_key(db, key).await?.is_some_and(|a| Some(&a.id) != form.id.as_ref())
            {
                errors.push(FieldError::new("key", SaveError::KeyTaken.to_string()));
            }
            return Ok(Saved { id: None, errors });
        }
    };
    if new.provider.api_key.is_none() {
        // The stored key is kept only for the host it was entered for: sending it to another
        // base URL (or another provider's host) takes the key typed again.
        if let Some(a) = &existing
            && a.provider.api_key.is_some()
            && (a.provider.base_url != new.provider.base_url || a.provider.kind != new.provider.kind)
        {
            let message = "Enter the API key again: the base URL or provider changed.";
            return Ok(Saved { id: None, errors: vec![FieldError::new("new_api_key", message)] });
        }
        new.provider.api_key = existing.as_ref().and_then(|a| a.provider.api_key.clone());
    }
    // A new or changed base URL keeps to the outbound rules (public https unless private
    // addresses are allowed): an administrator cannot point model calls, with their keys, at
    // this machine, its network or a cloud metadata service.
    if let Some(url) = new.provider.base_url.as_deref()
        && existing.as_ref().is_none_or(|a| a.provider.base_url.as_deref() != Some(url))
    {
        let settings = state.engine.settings().outbound;
        if let Err(e) = parley_engine::engine::outbound::check_typed(url, settings).await {
            return Ok(Saved { id: None, errors: vec![FieldError::new("base_url", e.for_field(settings))] });
        }
    }
    let now = state.engine.now_ms();
    let written = match &existing {
        Some(a) => {
            agents::update(db, &a.id, &new, Some(&user.email), now).await.map(|found| found.then(|| a.id.clone()))
        }
        None => agents::insert(db, &new, now).await.map(|a| Some(a.id)),
    };
    let id = match written {
        Ok(Some(id)) => id,
        Ok(None) => return Err(ConsoleError::NotFound),
        Err(SaveError::KeyTaken) => {
            return Ok(Saved { id: None, errors: vec![FieldError::new("key", SaveError::KeyTaken.to_string())] });
        }
        Err(SaveError::Db(e)) => return Err(e.into()),
    };
    agents::set_limits(db, &id, &limits).await?;
    state.engine.agents_changed();
    let mut changed = Vec::new();
    if existing.as_ref().is_some_and(|a| a.system_prompt != new.system_prompt) {
        changed.push("system prompt");
    }
    if !form.new_api_key.trim().is_empty() {
        changed.push("provider key");
    }
    // Prices are money: the audit log says when they (or the services) changed.
    if existing.as_ref().is_some_and(|a| a.domain.services != new.domain.services) {
        changed.push("services and prices");
    }
    let action = if existing.is_some() { "agent.update" } else { "agent.create" };
    state.engine.audit(Some(&user), action, Some(&new.public_key), &changed.join(", ")).await;
    Ok(Saved { id: Some(id), errors: vec![] })
}

/// What the form says, as the store parses it (an empty API key keeps the stored one, for the
/// same base URL and provider only).
#[cfg(feature = "ssr")]
fn input(form: &AgentForm) -> parley_engine::store::agents::AgentInput {
    parley_engine::store::agents::AgentInput {
        key: form.key.clone(),
        name: form.name.clone(),
        vertical: form.vertical.clone(),
        capabilities: form.capabilities.clone(),
        enabled_tools: form.enabled_tools.clone(),
        provider: form.provider.clone(),
        base_url: form.base_url.clone(),
        api_key: form.new_api_key.clone(),
        model: form.model.clone(),
        fallback_model: form.fallback_model.clone(),
        system_prompt: form.system_prompt.clone(),
        greeting: form.greeting.clone(),
        theme_color: form.theme_color.clone(),
        launcher_position: form.launcher_position.clone(),
        text_color: form.text_color.clone(),
        color_scheme: form.color_scheme.clone(),
        launcher_icon: form.launcher_icon.clone(),
        launcher_label: form.launcher_label.clone(),
        panel_width: form.panel_width.clone(),
        panel_height: form.panel_height.clone(),
        language: form.language.clone(),
        placeholder: form.placeholder.clone(),
        starters: form.starters.clone(),
        prechat_title: form.prechat_title.clone(),
        prechat_name: form.prechat_name.clone(),
        prechat_email: form.prechat_email.clone(),
        prechat_phone: form.prechat_phone.clone(),
        allowed_origins: form.allowed_origins.clone(),
        domain: parley_engine::store::agents::DomainText {
            services: form.services.clone(),
            sites: form.sites.clone(),
            reference_news: form.reference_news.clone(),
        },
    }
}

/// A store field error as the form shows it (the form's API key field is `new_api_key`).
#[cfg(feature = "ssr")]
fn field_error(mut e: FieldError) -> FieldError {
    if e.field == "api_key" {
        e.field = "new_api_key".into();
    }
    e
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    #[test]
    fn the_api_key_error_is_shown_at_the_new_key() {
        use parley_engine::store::agents::{AgentInput, NewAgent};
        let form = AgentForm { new_api_key: "k".repeat(501), ..crate::console::agents::blank() };
        let errors = NewAgent::parse(&input(&form), &[]).err().unwrap_or_default();
        let fields: Vec<String> = errors.into_iter().map(field_error).map(|e| e.field).collect();
        assert_eq!(fields, ["key", "name", "capabilities", "new_api_key"]);
        assert_eq!(input(&AgentForm::default()), AgentInput::default());
    }
}
