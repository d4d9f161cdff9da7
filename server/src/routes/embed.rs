//! The embed page `/embed/{key}` may only be framed by the agent's allowed origins: the page's
//! policy ([`super::csp`]) says so with `frame-ancestors`, and a page whose declared host origin
//! is not allowed is refused here.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use parley_app::server::state::AppState;

/// The `frame-ancestors` source list of agent `key`'s embed page, or the answer that refuses it
/// (unknown agent, or a declared host origin `?origin=` the agent does not allow).
pub async fn frame_ancestors(state: &AppState, key: &str, query: Option<&str>) -> Result<String, Response> {
    let agent = match state.engine.agent_by_key(key).await {
        Ok(Some(agent)) => agent,
        Ok(None) => return Err((StatusCode::NOT_FOUND, "Unknown agent.").into_response()),
        Err(e) => {
            tracing::error!(error = %e, "could not load agent for embed page");
            return Err((StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong.").into_response());
        }
    };
    let host_origin = query.and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "origin").map(|(_, v)| v.into_owned())
    });
    if let Some(origin) = &host_origin
        && !agent.allows_origin(origin.trim_end_matches('/'))
    {
        return Err((StatusCode::FORBIDDEN, "This website is not allowed to embed this agent.").into_response());
    }
    // No listed origin: only Parley's own pages (the console's preview) may frame it.
    Ok(if agent.allowed_origins.iter().any(|o| o == "*") {
        "*".to_owned()
    } else {
        let mut list = vec!["'self'".to_owned()];
        list.extend(agent.allowed_origins.iter().filter(|o| is_csp_source(o)).cloned());
        list.join(" ")
    })
}

/// An origin safe to put in a CSP source list.
fn is_csp_source(origin: &str) -> bool {
    (origin.starts_with("http://") || origin.starts_with("https://"))
        && origin.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '.' | '-' | '*'))
}
