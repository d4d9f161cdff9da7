//! `/mcp`: the agent's tools over the Model Context Protocol (Streamable HTTP, stateless). Every
//! request must carry an MCP access token, as `Authorization: Bearer pm_…` or `?token=pm_…`; the
//! `feature_set` (`base`/`detail`) and `output` (`raw`/`text`) query parameters override the
//! token's defaults. A request without a valid token is answered 401 before the MCP layer sees it.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use parley_app::server::mcp::service::http_service;
use parley_app::server::mcp::{AuthError, Overrides, authenticate};
use parley_app::server::state::AppState;

use crate::api_error::ApiFailure;
use parley_widget::protocol::ApiCode;

pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route_service("/mcp", http_service(state.engine.clone()))
        .layer(middleware::from_fn_with_state(state.clone(), require_token))
}

/// The token and the overrides of a request.
fn credentials(request: &Request) -> (Option<String>, Overrides) {
    let mut token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let mut overrides = Overrides::default();
    if let Some(query) = request.uri().query() {
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match key.as_ref() {
                "token" if token.is_none() && !value.trim().is_empty() => token = Some(value.trim().to_owned()),
                "feature_set" => overrides.feature_set = Some(value.into_owned()),
                "output" => overrides.output = Some(value.into_owned()),
                _ => {}
            }
        }
    }
    (token, overrides)
}

async fn require_token(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let (token, overrides) = credentials(&request);
    let outcome = match token {
        Some(token) => authenticate(&state.engine, &token, &overrides).await,
        None => Err(AuthError::Missing),
    };
    match outcome {
        Ok(access) => {
            request.extensions_mut().insert(Arc::new(access));
            next.run(request).await
        }
        Err(AuthError::Db(e)) => ApiFailure::from(e).into_response(),
        Err(AuthError::BadSetting(message)) => ApiFailure::new(ApiCode::BadMcpSetting, message).into_response(),
        Err(e @ (AuthError::Missing | AuthError::Invalid)) => {
            let code = if matches!(e, AuthError::Missing) { ApiCode::TokenRequired } else { ApiCode::BadToken };
            let mut response = ApiFailure::new(code, e.to_string()).into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"parley-mcp\""));
            response
        }
    }
}
