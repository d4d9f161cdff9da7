//! Owner-defined tools (administrators only): list, read for editing, save, delete. Every change
//! rebuilds the engine's registry at once (other replicas notice within seconds). Header values
//! are write-only: they are sealed at rest and never sent back to the browser.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{HttpToolForm, HttpToolItem, Saved};

/// Every owner-defined tool, with the agents that have it.
#[server]
pub async fn http_tools() -> Result<Vec<HttpToolItem>, ConsoleError> {
    use parley_engine::store::{agents, http_tools};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let all = agents::list(db).await?;
    Ok(http_tools::list(db)
        .await?
        .into_iter()
        .map(|t| HttpToolItem {
            agents: all.iter().filter(|a| a.has_capability(&t.capability)).map(|a| a.public_key.clone()).collect(),
            header_names: t.headers.iter().map(|(n, _)| n.clone()).collect(),
            id: t.id,
            name: t.name,
            capability: t.capability,
            method: t.method,
            url: t.url,
            description: t.description,
        })
        .collect())
}

/// The form of a saved tool (its header values left out).
#[server]
pub async fn http_tool(id: String) -> Result<HttpToolForm, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let t = parley_engine::store::http_tools::by_id(state.engine.db(), &id).await?.ok_or(ConsoleError::NotFound)?;
    Ok(HttpToolForm {
        id: Some(t.id),
        name: t.name,
        description: t.description,
        capability: t.capability,
        parameters: serde_json::to_string_pretty(&t.parameters).unwrap_or_default(),
        method: t.method,
        url: t.url,
        headers: String::new(),
        saved_headers: t.headers.iter().map(|(n, v)| format!("{n}: {}", v.hint())).collect(),
        timeout_ms: t.timeout_ms.to_string(),
    })
}

/// Creates (`id: None`) or replaces a tool. Field errors come back in [`Saved::errors`] and
/// nothing is written.
#[server(input = Json)]
pub async fn save_http_tool(form: HttpToolForm) -> Result<Saved, ConsoleError> {
    use crate::console::types::FieldError;
    use parley_engine::engine::tools::http_tool::{self, HttpToolInput};
    use parley_engine::store::http_tools::{self, SaveError};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let engine = &state.engine;
    // Names an owner's tool may not take: the tools Parley ships and the experts' `invoke_*`.
    let owned: Vec<String> = http_tools::list(engine.db()).await?.into_iter().map(|t| t.name).collect::<Vec<_>>();
    let taken: Vec<String> = engine.catalogue().into_iter().map(|(n, _)| n).filter(|n| !owned.contains(n)).collect();
    let input = HttpToolInput {
        name: form.name.clone(),
        description: form.description.clone(),
        capability: form.capability.clone(),
        parameters: form.parameters.clone(),
        method: form.method.clone(),
        url: form.url.clone(),
        headers: form.headers.clone(),
        timeout_ms: form.timeout_ms.clone(),
    };
    let fields = match http_tool::parse(&input, &taken, engine.settings().outbound) {
        Ok(fields) => fields,
        Err(errors) => return Ok(Saved { id: None, errors }),
    };
    let now = engine.now_ms();
    let outcome = match &form.id {
        None => http_tools::insert(engine.db(), &fields, now).await.map(Some),
        Some(id) => http_tools::update(engine.db(), id, &fields, now).await.map(|found| found.then(|| id.clone())),
    };
    let id = match outcome {
        Ok(Some(id)) => id,
        Ok(None) => return Err(ConsoleError::NotFound),
        Err(SaveError::NameTaken) => {
            return Ok(Saved { id: None, errors: vec![FieldError::new("name", SaveError::NameTaken.to_string())] });
        }
        Err(SaveError::Db(e)) => return Err(e.into()),
    };
    engine.reload_tools().await.map_err(ConsoleError::internal)?;
    let changed = if form.headers.trim().is_empty() { "" } else { "headers" };
    engine.audit(Some(&user), "tool.save", Some(&fields.name), changed).await;
    Ok(Saved { id: Some(id), errors: vec![] })
}

/// Deletes a tool: agents stop being offered it at once.
#[server]
pub async fn delete_http_tool(id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    if !parley_engine::store::http_tools::delete(state.engine.db(), &id).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.reload_tools().await.map_err(ConsoleError::internal)?;
    state.engine.audit(Some(&user), "tool.delete", Some(&id), "").await;
    Ok(())
}
