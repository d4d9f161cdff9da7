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

async fn health(State(state): State<AppState>) -> (StatusCode, String) {
    let (status, text) = probe(&state).await;
    // A detail for the operator: requests arrive through a proxy Parley does not trust.
    let forwards = state.http.trusted_proxies.untrusted_forwards();
    if status == StatusCode::OK && forwards > 0 {
        let warning = format!(
            "ok\nwarning: {forwards} requests carried X-Forwarded-For from a peer that is not a trusted proxy \
             (the header was ignored; name the proxy in PARLEY_TRUSTED_PROXIES)"
        );
        return (status, warning);
    }
    (status, text.to_owned())
}

async fn probe(state: &AppState) -> (StatusCode, &'static str) {
    // Draining: a load balancer stops sending new visitors here.
    if state.engine.shutdown_state().is_draining() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down");
    }
    if state.engine.writer_outage() {
        return (StatusCode::SERVICE_UNAVAILABLE, "database unavailable");
    }
    // A database that does not answer within the probe's patience counts as down. The probe
    // reads like every request does (a kept connection): sqlx's own pool may lend none while
    // the kept ones are idle.
    let db = state.engine.db().clone();
    let probe = async move {
        let mut conn = db.read().await?;
        sqlx::query("SELECT 1").execute(&mut *conn).await?;
        Ok::<(), parley_engine::store::DbError>(())
    };
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(2), probe).await;
    match outcome {
        Ok(Ok(())) => (StatusCode::OK, "ok"),
        failed => {
            let error = match failed {
                Ok(Err(e)) => e.to_string(),
                _ => "no answer within 2 s".to_owned(),
            };
            state.engine.db().connections_lost();
            tracing::error!(%error, "health check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable")
        }
    }
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], crate::metrics::render(&state))
}
