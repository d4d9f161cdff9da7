//! `GET /api/v1/agents/{key}/config`: an agent's public configuration (what the loader and the
//! panel may know). Public by design, so any origin may read it.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use parley_app::server::state::AppState;

use crate::api_error::ApiFailure;
use crate::extract::ClientIp;
use parley_engine::limits::Action;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/agents/{key}/config", get(config))
}

async fn config(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    Path(key): Path<String>,
) -> Result<impl IntoResponse, ApiFailure> {
    state.limits.check(Action::Read, ip, None).map_err(ApiFailure::limited)?;
    let agent = state.engine.agent_by_key(&key).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    let config = parley_engine::public_config_now(&state.engine, &agent).await;
    Ok(([(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"), (header::CACHE_CONTROL, "public, max-age=60")], Json(config)))
}
