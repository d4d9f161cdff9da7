//! MCP access tokens (administrators only): list, create (shown once), revoke.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{NewToken, TokenItem};

/// Every MCP token, revoked ones too (never the secret).
#[server]
pub async fn tokens() -> Result<Vec<TokenItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let list = parley_engine::store::mcp_tokens::list(state.engine.db(), None).await?;
    Ok(list
        .into_iter()
        .map(|t| TokenItem {
            id: t.id,
            agent_key: t.agent_key,
            name: t.name,
            feature_set: t.feature_set.as_str().into(),
            output: t.output_format.as_str().into(),
            modules: t.modules.as_deref().map(parley_engine::store::mcp_tokens::Module::join).unwrap_or_default(),
            prefix: t.token_prefix,
            created_at: t.created_at,
            revoked: t.revoked_at.is_some(),
        })
        .collect())
}

/// Creates a token for an agent; the answer holds the secret, shown once. `modules`: the modules
/// it may use, comma-separated (`knowledge,news`); empty: all of them.
#[server]
pub async fn create_token(
    agent_id: String,
    name: String,
    feature_set: String,
    output: String,
    #[server(default)] modules: String,
) -> Result<NewToken, ConsoleError> {
    use parley_engine::store::mcp_tokens;
    let AdminUser { state, user } = AdminUser::extract().await?;
    let db = state.engine.db();
    let feature_set = mcp_tokens::FeatureSet::parse(&feature_set)
        .ok_or_else(|| ConsoleError::invalid("feature_set", "Choose base or detail."))?;
    let output = mcp_tokens::OutputFormat::parse(&output)
        .ok_or_else(|| ConsoleError::invalid("output", "Choose raw or text."))?;
    let modules = mcp_tokens::Module::parse_list(&modules).map_err(|e| ConsoleError::invalid("modules", e))?;
    let name = super::checks::name(&name)?;
    super::checks::agent(db, &agent_id).await?;
    let now = state.engine.now_ms();
    let (t, token) = mcp_tokens::create(db, &agent_id, name, feature_set, output, modules.as_deref(), now).await?;
    state.engine.audit(Some(&user), "mcp_token.create", Some(&t.id), &format!("{} for agent {agent_id}", t.name)).await;
    let base = state.http.public_url.trim_end_matches('/');
    Ok(NewToken {
        id: t.id,
        url: format!("{base}/mcp?token={token}"),
        sse_url: format!("{base}/sse/mcp?token={token}"),
        token,
    })
}

/// Revokes a token: clients using it are refused from now on.
#[server]
pub async fn revoke_token(id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    let done = parley_engine::store::mcp_tokens::revoke(state.engine.db(), &id, None, state.engine.now_ms()).await?;
    if !done {
        return Err(ConsoleError::NotFound);
    }
    state.engine.audit(Some(&user), "mcp_token.revoke", Some(&id), "").await;
    Ok(())
}
