//! Expert agents (administrators only): list, read for editing, save. Experts are the seed's;
//! they are edited here, never created or renamed. Every save reloads the engine's copy.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{ExpertForm, ExpertItem, Saved, ToolInfo};

/// Every expert, for the list.
#[server]
pub async fn experts() -> Result<Vec<ExpertItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let experts = parley_engine::store::experts::list(state.engine.db()).await?;
    let agents = parley_engine::store::agents::list(state.engine.db()).await?;
    let key_of = |id: &str| agents.iter().find(|a| a.id == id).map_or_else(|| id.to_owned(), |a| a.public_key.clone());
    Ok(experts
        .into_iter()
        .map(|e| ExpertItem {
            agent: e.agent_id.as_deref().map(key_of),
            based_on: e.based_on,
            name: e.name,
            description: e.description,
            enabled: e.enabled,
            model: e.model,
            tools: e.tools,
            max_tokens: e.max_tokens,
        })
        .collect())
}

/// What the expert form needs, in one call: the expert, the tools an expert may be given, and
/// the coordinators (`(id, key)`) that could have their own copy of it.
#[server]
pub async fn expert_editor(name: String) -> Result<(ExpertForm, Vec<ToolInfo>, Vec<(String, String)>), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let e = stored(&state, &name).await?;
    let agents = parley_engine::store::agents::list(state.engine.db()).await?;
    let key_of = |id: &str| agents.iter().find(|a| a.id == id).map_or_else(|| id.to_owned(), |a| a.public_key.clone());
    let coordinators =
        agents.iter().filter(|a| a.is_coordinator()).map(|a| (a.id.clone(), a.public_key.clone())).collect();
    let form = ExpertForm {
        copy_of: e
            .agent_id
            .as_deref()
            .zip(e.based_on.as_deref())
            .map(|(agent, based_on)| (key_of(agent), based_on.to_owned())),
        input_schema: serde_json::to_string_pretty(&e.input_schema).unwrap_or_default(),
        name: e.name,
        description: e.description,
        system_prompt: e.system_prompt,
        tools: e.tools,
        model: e.model.unwrap_or_default(),
        max_tokens: e.max_tokens.to_string(),
        enabled: e.enabled,
    };
    let tools = catalogue(&state).into_iter().map(|(name, capability)| ToolInfo { name, capability }).collect();
    Ok((form, tools, coordinators))
}

/// Gives the coordinator `agent_id` its own copy of the shared expert `name` (same fields, to be
/// edited on its own page); the copy's name. A copy that exists already is kept.
#[server]
pub async fn copy_expert(name: String, agent_id: String) -> Result<String, ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    let engine = &state.engine;
    let agent = parley_engine::store::agents::by_id(engine.db(), &agent_id)
        .await?
        .filter(|a| a.is_coordinator())
        .ok_or_else(|| ConsoleError::invalid("agent_id", "Choose a coordinator agent (capability expert_team)."))?;
    let copy =
        parley_engine::store::experts::copy_for(engine.db(), &name, &agent.id, &agent.public_key, engine.now_ms())
            .await?
            .ok_or(ConsoleError::NotFound)?;
    engine.reload_prices().await.map_err(ConsoleError::internal)?;
    engine.audit(Some(&user), "expert.copy", Some(&copy), &format!("of {name} for {}", agent.public_key)).await;
    Ok(copy)
}

/// Deletes a coordinator's own copy: it has the shared expert again.
#[server]
pub async fn delete_expert_copy(name: String) -> Result<(), ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    if !parley_engine::store::experts::delete_copy(state.engine.db(), &name).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.reload_prices().await.map_err(ConsoleError::internal)?;
    state.engine.audit(Some(&user), "expert.delete", Some(&name), "a coordinator's copy").await;
    Ok(())
}

/// Saves the editable fields of an existing expert. Field errors come back in
/// [`Saved::errors`] and nothing is written.
#[server(input = Json)]
pub async fn save_expert(form: ExpertForm) -> Result<Saved, ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    stored(&state, &form.name).await?;
    let catalogue = catalogue(&state);
    let names: Vec<&str> = catalogue.iter().map(|(n, _)| n.as_str()).collect();
    let expert = match validate(&form, &names) {
        Ok(expert) => expert,
        Err(errors) => return Ok(Saved { id: None, errors }),
    };
    if !parley_engine::store::experts::update(state.engine.db(), &expert, state.engine.now_ms()).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.reload_prices().await.map_err(ConsoleError::internal)?;
    state.engine.audit(Some(&user), "expert.update", Some(&expert.name), "prompt and settings").await;
    Ok(Saved { id: Some(expert.name), errors: vec![] })
}

/// The stored expert of that name.
#[cfg(feature = "ssr")]
async fn stored(
    state: &crate::server::state::AppState,
    name: &str,
) -> Result<parley_engine::engine::experts::Expert, ConsoleError> {
    let all = parley_engine::store::experts::list(state.engine.db()).await?;
    all.into_iter().find(|e| e.name == name).ok_or(ConsoleError::NotFound)
}

/// The registry's tools an expert may be given (experts do not call experts).
#[cfg(feature = "ssr")]
fn catalogue(state: &crate::server::state::AppState) -> Vec<(String, String)> {
    use parley_engine::engine::experts::INVOKE;
    state
        .engine
        .registry()
        .catalogue()
        .into_iter()
        .filter(|(name, _)| !name.starts_with(INVOKE))
        .map(|(n, c)| (n.to_owned(), c.to_owned()))
        .collect()
}

/// The expert the form describes, or everything wrong with it, by field. `tools` are the names an
/// expert may be given.
#[cfg(feature = "ssr")]
pub fn validate(
    form: &ExpertForm,
    tools: &[&str],
) -> Result<parley_engine::engine::experts::Expert, Vec<crate::console::types::FieldError>> {
    use crate::console::types::FieldError;
    use parley_engine::engine::experts::INVOKE;
    use serde_json::Value;
    let mut errors = Vec::new();
    let description = form.description.trim();
    if description.is_empty() || description.chars().count() > 2000 {
        errors.push(FieldError::new("description", "A description of 1 to 2,000 characters."));
    }
    let system_prompt = form.system_prompt.trim();
    if system_prompt.is_empty() || system_prompt.chars().count() > 20_000 {
        errors.push(FieldError::new("system_prompt", "Instructions of 1 to 20,000 characters."));
    }
    let mut chosen: Vec<String> = Vec::new();
    for t in &form.tools {
        if t.starts_with(INVOKE) {
            errors.push(FieldError::new("tools", format!("Experts cannot call other experts ({t}).")));
            break;
        }
        if !tools.contains(&t.as_str()) {
            errors.push(FieldError::new("tools", format!("Unknown tool: {t}.")));
            break;
        }
        if !chosen.contains(t) {
            chosen.push(t.clone());
        }
    }
    let model = form.model.trim();
    if model.chars().count() > 120 || model.chars().any(|c| c.is_whitespace() || c.is_control()) {
        errors
            .push(FieldError::new("model", "Empty (the coordinator's model) or a model name of up to 120 characters."));
    }
    let max_tokens = match form.max_tokens.trim().parse::<u32>() {
        Ok(n) if (50..=8000).contains(&n) => n,
        _ => {
            errors.push(FieldError::new("max_tokens", "A whole number from 50 to 8000."));
            0
        }
    };
    let input_schema = match serde_json::from_str::<Value>(&form.input_schema) {
        _ if form.input_schema.len() > 20_000 => {
            errors.push(FieldError::new("input_schema", "At most 20,000 characters."));
            Value::Null
        }
        Ok(schema @ Value::Object(_)) if schema.get("type") == Some(&Value::from("object")) => {
            if let Err(e) = jsonschema::validator_for(&schema) {
                errors.push(FieldError::new("input_schema", format!("Not a valid JSON Schema: {e}")));
            }
            schema
        }
        Ok(_) => {
            errors.push(FieldError::new("input_schema", "A JSON object with \"type\": \"object\"."));
            Value::Null
        }
        Err(e) => {
            errors.push(FieldError::new("input_schema", format!("Not JSON: {e}")));
            Value::Null
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(parley_engine::engine::experts::Expert {
        name: form.name.clone(),
        description: description.to_owned(),
        input_schema,
        system_prompt: system_prompt.to_owned(),
        tools: chosen,
        model: Some(model.to_owned()).filter(|m| !m.is_empty()),
        max_tokens,
        enabled: form.enabled,
        // Not written by an edit: a copy stays its coordinator's.
        agent_id: None,
        based_on: None,
    })
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["search_knowledge", "get_user_context"];

    fn good() -> ExpertForm {
        ExpertForm {
            name: "policy_expert".into(),
            description: "Looks up policies.".into(),
            system_prompt: "You explain policies.".into(),
            tools: vec!["search_knowledge".into(), "search_knowledge".into()],
            model: " ".into(),
            max_tokens: "800".into(),
            enabled: true,
            input_schema: r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#.into(),
            copy_of: None,
        }
    }

    fn fields(form: &ExpertForm) -> Vec<String> {
        validate(form, TOOLS).err().unwrap_or_default().into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn accepts_a_good_form() {
        let e = validate(&good(), TOOLS).unwrap();
        assert_eq!(e.tools, ["search_knowledge"]);
        assert_eq!(e.model, None);
        assert_eq!(e.input_schema["required"][0], "query");
    }

    #[test]
    fn names_each_wrong_field() {
        let f = ExpertForm {
            description: " ".into(),
            system_prompt: "".into(),
            tools: vec!["teleport".into()],
            model: "gpt 4o".into(),
            max_tokens: "49".into(),
            input_schema: "{\"type\": \"array\"}".into(),
            ..good()
        };
        assert_eq!(fields(&f), ["description", "system_prompt", "tools", "model", "max_tokens", "input_schema"]);
        for schema in ["[]", "{", "{}", "\"object\"", "{\"type\":\"object\",\"properties\":3}"] {
            assert_eq!(fields(&ExpertForm { input_schema: schema.into(), ..good() }), ["input_schema"], "{schema}");
        }
        let f = ExpertForm { tools: vec!["invoke_policy_expert".into()], max_tokens: "8001".into(), ..good() };
        assert_eq!(fields(&f), ["tools", "max_tokens"]);
    }
}
