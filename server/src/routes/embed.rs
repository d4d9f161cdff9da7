//! The embed page `/embed/{key}` may only be framed by the agent's allowed origins: the server
//! says so with `Content-Security-Policy: frame-ancestors`, and refuses a page whose declared host
//! origin is not allowed.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use parley_app::server::state::AppState;

pub async fn frame_policy(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(key) = request.uri().path().strip_prefix("/embed/").map(|k| k.trim_end_matches('/').to_owned()) else {
        // The console is never framed (clickjacking).
        let console = request.uri().path().starts_with("/admin");
        let mut response = next.run(request).await;
        if console {
            response
                .headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("frame-ancestors 'none'"));
            response.headers_mut().insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        }
        return response;
    };
    let agent = match state.engine.agent_by_key(&key).await {
        Ok(Some(agent)) => agent,
        Ok(None) => return (StatusCode::NOT_FOUND, "Unknown agent.").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "could not load agent for embed page");
            return (StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong.").into_response();
        }
    };
    let host_origin = request.uri().query().and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "origin").map(|(_, v)| v.into_owned())
    });
    if let Some(origin) = &host_origin
        && !agent.allows_origin(origin.trim_end_matches('/'))
    {
        return (StatusCode::FORBIDDEN, "This website is not allowed to embed this agent.").into_response();
    }
    // No listed origin: only Parley's own pages (the console's preview) may frame it.
    let ancestors = if agent.allowed_origins.iter().any(|o| o == "*") {
        "*".to_owned()
    } else {
        let mut list = vec!["'self'".to_owned()];
        list.extend(agent.allowed_origins.iter().filter(|o| is_csp_source(o)).cloned());
        list.join(" ")
    };
    let mut response = next.run(request).await;
    if let Ok(v) = HeaderValue::from_str(&format!("frame-ancestors {ancestors}")) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    response.headers_mut().insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}

/// An origin safe to put in a CSP source list.
fn is_csp_source(origin: &str) -> bool {
    (origin.starts_with("http://") || origin.starts_with("https://"))
        && origin.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '.' | '-' | '*'))
}
