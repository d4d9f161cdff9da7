//! `GET /api/v1/agents/{key}/config`: an agent's public configuration (what the loader and the
//! panel may know) with its enabled triggers, which only the loader reads. Public by design, so
//! any origin may read it. `POST /api/v1/agents/{key}/engage`: the loader counts a trigger shown
//! or clicked (a body sent as text, so that no pre-flight is needed from the host's origin).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use parley_app::server::state::AppState;
use parley_protocol::{ApiCode, EngageReport, PublicAgentConfig, Trigger};
use serde::Serialize;

use crate::api_error::ApiFailure;
use crate::extract::ClientIp;
use parley_engine::limits::Action;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/agents/{key}/config", get(config)).route("/api/v1/agents/{key}/engage", post(engage))
}

/// What the loader reads: the panel's configuration and the triggers beside it.
#[derive(Serialize)]
struct LoaderConfig {
    #[serde(flatten)]
    config: PublicAgentConfig,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    triggers: Vec<Trigger>,
}

async fn config(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    Path(key): Path<String>,
) -> Result<impl IntoResponse, ApiFailure> {
    state.limits.check(Action::Read, ip, None).map_err(ApiFailure::limited)?;
    let agent = state.engine.agent_by_key(&key).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    let config = parley_engine::public_config_now(&state.engine, &agent).await;
    let triggers = parley_engine::store::engage::enabled(state.engine.db(), &agent.id).await?;
    Ok((
        [(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"), (header::CACHE_CONTROL, "public, max-age=60")],
        Json(LoaderConfig { config, triggers }),
    ))
}

async fn engage(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    Path(key): Path<String>,
    body: Bytes,
) -> Result<impl IntoResponse, ApiFailure> {
    state.limits.check(Action::Read, ip, None).map_err(ApiFailure::limited)?;
    let report: EngageReport = serde_json::from_slice(&body).map_err(|_| {
        ApiFailure::new(ApiCode::InvalidBody, "Expected {\"trigger\": name, \"event\": \"shown\" or \"clicked\"}.")
    })?;
    let agent = state.engine.agent_by_key(&key).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    let db = state.engine.db();
    let now = state.engine.now_ms();
    if !parley_engine::store::engage::count(db, &agent.id, &report.trigger, report.event, now).await? {
        return Err(ApiFailure::not_found("Trigger"));
    }
    Ok(([(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")], StatusCode::NO_CONTENT))
}
