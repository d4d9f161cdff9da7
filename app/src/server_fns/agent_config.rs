//! The public configuration of an agent, for the embed page.

use leptos::prelude::*;
use parley_widget::protocol::PublicAgentConfig;

/// What the panel needs to boot: name, greeting, theme and the capabilities it may render.
#[server]
pub async fn agent_config(key: String) -> Result<PublicAgentConfig, ServerFnError> {
    use crate::server::state::AppState;
    let state = expect_context::<AppState>();
    match state.engine.agent_by_key(&key).await {
        Ok(Some(agent)) => Ok(crate::server::public_config(&state.engine, &agent)),
        Ok(None) => Err(ServerFnError::new("unknown agent")),
        Err(e) => {
            tracing::error!(error = %e, "loading agent config");
            Err(ServerFnError::new("unavailable"))
        }
    }
}
