//! `GET /healthz` (the database answers and the server is not shutting down) and `GET /metrics` (Prometheus text, see `crate::metrics`).

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
    // Draining: a load balancer stops sending new visitors here.
    if state.engine.shutdown_state().is_draining() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down");
    }
    if state.engine.writer_outage() {
        return (StatusCode::SERVICE_UNAVAILABLE, "database unavailable");
    }
    // A database that does not answer within the probe's patience counts as down.
    let probe = sqlx::query("SELECT 1").execute(state.engine.db().pool());
    match tokio::time::timeout(std::time::Duration::from_secs(2), probe).await.unwrap_or(Err(sqlx::Error::PoolTimedOut))
    {
        Ok(_) => (StatusCode::OK, "ok"),
        Err(e) => {
            state.engine.db().connections_lost();
            tracing::error!(error = %e, "health check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable")
        }
    }
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], crate::metrics::render(&state))
}
