//! `GET /widget.js`: the loader that host pages embed.

use std::path::Path;

use axum::Router;
use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use parley_app::server::state::AppState;
use parley_widget::LOADER_JS;

/// The loader: the minified copy `.ci/build-widget.sh` writes next to the panel's bundle
/// (`loader.min.js` in the widget directory), read once at start; else the readable source
/// compiled in.
pub fn router(widget_dir: &Path) -> Router<AppState> {
    let script = match std::fs::read(widget_dir.join("loader.min.js")) {
        Ok(minified) => Bytes::from(minified),
        Err(_) => Bytes::from_static(LOADER_JS.as_bytes()),
    };
    Router::new().route("/widget.js", get(move || loader(script.clone())))
}

async fn loader(script: Bytes) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "application/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        script,
    )
}
