//! Agents: list, read for editing, save (administrators only), and the names operators filter by.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::console::types::{AgentForm, AgentSummary, Saved, ToolInfo};

/// `(id, name)` of every agent, for filters (operators too).
#[server]
pub async fn agent_names() -> Result<Vec<(String, String)>, ServerFnError> {
    let (state, _) = super::access::require(false).await?;
    let agents = crate::server::store::agents::list(state.engine.db()).await.map_err(super::access::internal)?;
    Ok(agents.into_iter().map(|a| (a.id, a.name)).collect())
}

#[server]
pub async fn agents() -> Result<Vec<AgentSummary>, ServerFnError> {
    let (state, _) = super::access::require(true).await?;
    let agents = crate::server::store::agents::list(state.engine.db()).await.map_err(super::access::internal)?;
    Ok(agents
        .into_iter()
        .map(|a| AgentSummary {
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
pub async fn tool_catalogue() -> Result<Vec<ToolInfo>, ServerFnError> {
    let (state, _) = super::access::require(true).await?;
    Ok(catalogue(&state))
}

#[cfg(feature = "ssr")]
fn catalogue(state: &crate::server::state::AppState) -> Vec<ToolInfo> {
    state.engine.catalogue().into_iter().map(|(name, capability)| ToolInfo { name, capability }).collect()
}

/// What the agent form needs: the agent (a blank one for `None`) and the registry's tools, in
/// one call. (Server rendering loses the request's context after the first wait, so a page's
/// resource calls one server function, which reads the context first.)
#[server]
pub async fn agent_editor(id: Option<String>) -> Result<(AgentForm, Vec<ToolInfo>), ServerFnError> {
    let (state, _) = super::access::require(true).await?;
    let form = match id {
        Some(id) => agent_form(&state, &id).await?,
        None => crate::console::agents::blank(),
    };
    Ok((form, catalogue(&state)))
}

/// The agent and the URL browsers reach this server at (for the snippet).
#[server]
pub async fn embed_info(id: String) -> Result<(AgentForm, String), ServerFnError> {
    let (state, _) = super::access::require(true).await?;
    let form = agent_form(&state, &id).await?;
    Ok((form, state.http.public_url.trim_end_matches('/').to_owned()))
}

/// An agent as the form shows it; the API key only as a hint.
#[server]
pub async fn agent(id: String) -> Result<AgentForm, ServerFnError> {
    let (state, _) = super::access::require(true).await?;
    agent_form(&state, &id).await
}

#[cfg(feature = "ssr")]
async fn agent_form(state: &crate::server::state::AppState, id: &str) -> Result<AgentForm, ServerFnError> {
    use crate::server::store::agents;
    let db = state.engine.db();
    let a =
        agents::by_id(db, id).await.map_err(super::access::internal)?.ok_or_else(|| ServerFnError::new("not found"))?;
    Ok(AgentForm {
        id: Some(a.id),
        key: a.public_key,
        name: a.name,
        vertical: a.vertical,
        capabilities: a.capabilities,
        enabled_tools: a.enabled_tools,
        provider: a.provider.kind.as_str().into(),
        base_url: a.provider.base_url.unwrap_or_default(),
        api_key_hint: a.provider.api_key.as_ref().map(crate::server::secret::ApiKey::hint),
        new_api_key: String::new(),
        model: a.provider.model,
        fallback_model: a.provider.fallback_model.unwrap_or_default(),
        system_prompt: a.system_prompt,
        greeting: a.greeting,
        theme_color: a.theme.color,
        launcher_position: a.theme.position,
        allowed_origins: a.allowed_origins,
        budget_usd: a.limits.budget_usd,
        max_turns: a.limits.max_turns.map(|n| n.to_string()).unwrap_or_default(),
        daily_cap_usd: a.limits.daily_cap_usd.map(|n| n.to_string()).unwrap_or_default(),
    })
}

/// Creates (no id) or updates an agent. Field errors come back in [`Saved::errors`] and nothing
/// is written.
#[server(input = Json)]
pub async fn save_agent(form: AgentForm) -> Result<Saved, ServerFnError> {
    use crate::server::store::agents::{self, NewAgent, ProviderConfig, ProviderKind};
    let (state, _) = super::access::require(true).await?;
    let db = state.engine.db();
    let e = super::access::internal;
    let existing = match &form.id {
        Some(id) => Some(agents::by_id(db, id).await.map_err(e)?.ok_or_else(|| ServerFnError::new("not found"))?),
        None => None,
    };
    let catalogue = state.engine.catalogue();
    let catalogue: Vec<(&str, &str)> = catalogue.iter().map(|(n, c)| (n.as_str(), c.as_str())).collect();
    let mut errors = validate(&form, &catalogue);
    if errors.iter().all(|f| f.field != "key")
        && agents::key_taken(db, form.key.trim(), form.id.as_deref()).await.map_err(e)?
    {
        errors.push(field("key", "Another agent already uses this key."));
    }
    if !errors.is_empty() {
        return Ok(Saved { id: None, errors });
    }
    let api_key = match form.new_api_key.trim() {
        "" => existing.as_ref().and_then(|a| a.provider.api_key.clone()),
        k => crate::server::secret::ApiKey::new(k),
    };
    let optional = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    let new = NewAgent {
        public_key: form.key.trim().into(),
        name: form.name.trim().into(),
        vertical: form.vertical.trim().into(),
        capabilities: form.capabilities.clone(),
        enabled_tools: form.enabled_tools.clone(),
        provider: ProviderConfig {
            kind: ProviderKind::parse(&form.provider).unwrap_or(ProviderKind::Demo),
            base_url: optional(&form.base_url),
            api_key,
            model: form.model.trim().into(),
            fallback_model: optional(&form.fallback_model),
        },
        system_prompt: form.system_prompt.clone(),
        greeting: form.greeting.trim().into(),
        theme: parley_widget::protocol::Theme {
            color: form.theme_color.trim().to_lowercase(),
            position: form.launcher_position.clone(),
        },
        allowed_origins: form.allowed_origins.iter().map(|o| o.trim().trim_end_matches('/').to_owned()).collect(),
    };
    let now = state.engine.now_ms();
    let id = match existing {
        Some(a) => {
            agents::update(db, &a.id, &new, now).await.map_err(e)?;
            a.id
        }
        None => agents::insert(db, &new, now).await.map_err(e)?.id,
    };
    let limits = agents::AgentLimits {
        budget_usd: form.budget_usd,
        max_turns: form.max_turns.trim().parse().ok(),
        daily_cap_usd: form.daily_cap_usd.trim().parse().ok(),
    };
    agents::set_limits(db, &id, &limits).await.map_err(e)?;
    state.engine.agents_changed();
    Ok(Saved { id: Some(id), errors: vec![] })
}

#[cfg(feature = "ssr")]
fn field(field: &str, message: &str) -> crate::console::types::FieldError {
    crate::console::types::FieldError { field: field.into(), message: message.into() }
}

/// Everything wrong with the form, by field. `catalogue` is the registry's `(tool, capability)`.
#[cfg(feature = "ssr")]
pub fn validate(form: &AgentForm, catalogue: &[(&str, &str)]) -> Vec<crate::console::types::FieldError> {
    let mut errors = Vec::new();
    let key = form.key.trim();
    if !(3..=40).contains(&key.len()) || !key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errors.push(field("key", "3 to 40 characters: lower-case letters, digits and '-'."));
    }
    let name = form.name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        errors.push(field("name", "A name of 1 to 80 characters."));
    }
    if form.vertical.trim().is_empty() || form.vertical.chars().count() > 40 {
        errors.push(field("vertical", "A vertical of 1 to 40 characters (e.g. help_center)."));
    }
    let known: Vec<&str> = catalogue.iter().map(|(_, c)| *c).collect();
    if let Some(bad) = form.capabilities.iter().find(|c| !known.contains(&c.as_str())) {
        errors.push(field("capabilities", &format!("Unknown capability: {bad}.")));
    }
    if let Some(tools) = &form.enabled_tools {
        for t in tools {
            match catalogue.iter().find(|(name, _)| name == t) {
                None => errors.push(field("enabled_tools", &format!("Unknown tool: {t}."))),
                Some((_, cap)) if !form.capabilities.iter().any(|c| c == cap) => {
                    errors.push(field("enabled_tools", &format!("{t} needs the capability {cap}.")))
                }
                _ => {}
            }
        }
    }
    match form.provider.as_str() {
        "demo" => {}
        "openai" | "anthropic" => {
            let url = form.base_url.trim();
            if url::Url::parse(url).map(|u| !matches!(u.scheme(), "http" | "https")).unwrap_or(true) {
                errors.push(field("base_url", "An http(s) URL, e.g. https://api.openai.com/v1."));
            }
        }
        _ => errors.push(field("provider", "Choose demo, openai or anthropic.")),
    }
    if form.model.trim().is_empty() || form.model.len() > 120 {
        errors.push(field("model", "A model name of 1 to 120 characters."));
    }
    if form.fallback_model.len() > 120 {
        errors.push(field("fallback_model", "At most 120 characters."));
    }
    if form.new_api_key.len() > 500 {
        errors.push(field("new_api_key", "At most 500 characters."));
    }
    if form.system_prompt.chars().count() > 20_000 {
        errors.push(field("system_prompt", "At most 20,000 characters."));
    }
    if form.greeting.chars().count() > 500 {
        errors.push(field("greeting", "At most 500 characters."));
    }
    let color = form.theme_color.trim();
    if color.len() != 7 || !color.starts_with('#') || !color[1..].bytes().all(|b| b.is_ascii_hexdigit()) {
        errors.push(field("theme_color", "A colour like #4f46e5."));
    }
    if !matches!(form.launcher_position.as_str(), "left" | "right") {
        errors.push(field("launcher_position", "left or right."));
    }
    for origin in &form.allowed_origins {
        let o = origin.trim().trim_end_matches('/');
        let ok = o == "*"
            || url::Url::parse(o).is_ok_and(|u| {
                matches!(u.scheme(), "http" | "https")
                    && u.host_str().is_some()
                    && u.path() == "/"
                    && u.query().is_none()
                    && u.origin().ascii_serialization() == o
            });
        if !ok {
            errors.push(field("allowed_origins", &format!("Not an origin: {origin} (e.g. https://www.example.com).")));
            break;
        }
    }
    if !(form.budget_usd.is_finite() && form.budget_usd > 0.0 && form.budget_usd <= 1000.0) {
        errors.push(field("budget_usd", "A budget above 0 and at most 1000 US dollars."));
    }
    let max_turns = form.max_turns.trim();
    if !max_turns.is_empty() && !max_turns.parse::<u32>().is_ok_and(|n| (1..=50).contains(&n)) {
        errors.push(field("max_turns", "Empty (3, or 15 for a coordinator) or a whole number from 1 to 50."));
    }
    let cap = form.daily_cap_usd.trim();
    if !cap.is_empty() && !cap.parse::<f64>().is_ok_and(|n| n.is_finite() && n > 0.0 && n <= 100_000.0) {
        errors.push(field("daily_cap_usd", "Empty (no cap) or an amount above 0 and at most 100000 US dollars."));
    }
    errors
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    const CATALOGUE: &[(&str, &str)] =
        &[("escalate_to_human", "ticket_escalation"), ("search_knowledge", "knowledge_search")];

    fn good() -> AgentForm {
        AgentForm {
            key: "shop-help".into(),
            name: "Shop help".into(),
            vertical: "help_center".into(),
            capabilities: vec!["ticket_escalation".into()],
            provider: "demo".into(),
            model: "parley-demo".into(),
            theme_color: "#4f46e5".into(),
            launcher_position: "right".into(),
            allowed_origins: vec!["https://shop.example.com".into(), "http://127.0.0.1:3001/".into()],
            budget_usd: 0.5,
            ..Default::default()
        }
    }

    fn fields(form: &AgentForm) -> Vec<String> {
        validate(form, CATALOGUE).into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn accepts_a_good_form() {
        assert!(fields(&good()).is_empty());
    }

    #[test]
    fn names_each_wrong_field() {
        let mut f = good();
        f.key = "Bad Key".into();
        f.capabilities.push("teleport".into());
        f.enabled_tools = Some(vec!["search_knowledge".into()]);
        f.provider = "openai".into();
        f.base_url = "ftp://x".into();
        f.theme_color = "red".into();
        f.launcher_position = "top".into();
        f.allowed_origins = vec!["https://x.example.com/path".into()];
        f.budget_usd = -1.0;
        f.max_turns = "0".into();
        f.daily_cap_usd = "lots".into();
        assert_eq!(
            fields(&f),
            [
                "key",
                "capabilities",
                "enabled_tools",
                "base_url",
                "theme_color",
                "launcher_position",
                "allowed_origins",
                "budget_usd",
                "max_turns",
                "daily_cap_usd"
            ]
        );
    }
}
