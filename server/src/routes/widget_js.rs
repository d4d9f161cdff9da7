//! `GET /widget.js`: the loader that host pages embed.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use parley_app::server::state::AppState;
use parley_widget::LOADER_JS;

pub fn router() -> Router<AppState> {
    Router::new().route("/widget.js", get(loader))
}

async fn loader() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "application/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        LOADER_JS,
    )
}
