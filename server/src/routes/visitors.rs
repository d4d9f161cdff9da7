//! `POST /api/v1/visitors`: a new anonymous visitor and its bearer token.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use parley_app::server::state::AppState;
use parley_widget::protocol::{ApiCode, CreateVisitor, VisitorCreated};

use crate::api_error::ApiFailure;
use parley_app::server::limits::Action;

use crate::extract::{ApiJson, ClientIp, check_origin};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/visitors", post(create))
}

async fn create(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    ApiJson(body): ApiJson<CreateVisitor>,
) -> Result<(StatusCode, Json<VisitorCreated>), ApiFailure> {
    state.limits.check(Action::CreateVisitor, ip, None).map_err(ApiFailure::limited)?;
    let agent = state.engine.agent_by_key(&body.agent).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    check_origin(&headers, &agent)?;
    let host_origin = body.host_origin.as_deref().map(|o| o.trim_end_matches('/'));
    if let Some(origin) = host_origin
        && !agent.allows_origin(origin)
    {
        return Err(ApiFailure::new(ApiCode::OriginNotAllowed, "This website is not allowed to use this agent."));
    }
    let (visitor, token) = state.engine.create_visitor(&agent, host_origin).await?;
    Ok((StatusCode::CREATED, Json(VisitorCreated { visitor_id: visitor.id, token })))
}
