//! MCP access tokens (administrators only): list, create (shown once), revoke.

use leptos::prelude::*;

use crate::console::types::{NewToken, TokenItem};

#[server]
pub async fn tokens() -> Result<Vec<TokenItem>, ServerFnError> {
    let (state, _) = super::access::require(true).await?;
    let list =
        crate::server::store::mcp_tokens::list(state.engine.db(), None).await.map_err(super::access::internal)?;
    Ok(list
        .into_iter()
        .map(|t| TokenItem {
            id: t.id,
            agent_key: t.agent_key,
            name: t.name,
            feature_set: t.feature_set.as_str().into(),
            output: t.output_format.as_str().into(),
            prefix: t.token_prefix,
            created_at: t.created_at,
            revoked: t.revoked_at.is_some(),
        })
        .collect())
}

#[server]
pub async fn create_token(
    agent_id: String,
    name: String,
    feature_set: String,
    output: String,
) -> Result<NewToken, ServerFnError> {
    use crate::server::store::{agents, mcp_tokens};
    let (state, _) = super::access::require(true).await?;
    let db = state.engine.db();
    let e = super::access::internal;
    let feature_set =
        mcp_tokens::FeatureSet::parse(&feature_set).ok_or_else(|| ServerFnError::new("Choose base or detail."))?;
    let output = mcp_tokens::OutputFormat::parse(&output).ok_or_else(|| ServerFnError::new("Choose raw or text."))?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(ServerFnError::new("A name of 1 to 80 characters."));
    }
    if agents::by_id(db, &agent_id).await.map_err(e)?.is_none() {
        return Err(ServerFnError::new("Choose an agent."));
    }
    let (t, token) =
        mcp_tokens::create(db, &agent_id, name, feature_set, output, state.engine.now_ms()).await.map_err(e)?;
    let url = format!("{}/mcp?token={token}", state.http.public_url.trim_end_matches('/'));
    Ok(NewToken { id: t.id, token, url })
}

#[server]
pub async fn revoke_token(id: String) -> Result<(), ServerFnError> {
    let (state, _) = super::access::require(true).await?;
    let done = crate::server::store::mcp_tokens::revoke(state.engine.db(), &id, None, state.engine.now_ms())
        .await
        .map_err(super::access::internal)?;
    if done { Ok(()) } else { Err(ServerFnError::new("not found")) }
}
