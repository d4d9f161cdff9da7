//! `GET /healthz` (the database answers) and `GET /metrics` (Prometheus text).

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use parley_app::server::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(health)).route("/metrics", get(metrics))
}

async fn health(State(state): State<AppState>) -> impl IntoResponse {
    match sqlx::query("SELECT 1").execute(state.engine.db().pool()).await {
        Ok(_) => (StatusCode::OK, "ok"),
        Err(e) => {
            tracing::error!(error = %e, "health check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable")
        }
    }
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let body = format!(
        "# HELP parley_live_channels Conversations with an open stream or a running turn.\n\
         # TYPE parley_live_channels gauge\nparley_live_channels {}\n",
        state.engine.hub().live_channels()
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}
