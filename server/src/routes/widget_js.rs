//! `GET /widget.js`: the loader that host pages embed; `GET /widget-engage.js`: the trigger
//! script it adds only for an agent with triggers.

use std::path::Path;

use axum::Router;
use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use parley_app::server::state::AppState;
use parley_widget::{ENGAGE_JS, LOADER_JS};

/// Each script: the minified copy `.ci/build-widget.sh` writes next to the panel's bundle
/// (`loader.min.js`, `engage.min.js` in the widget directory), read once at start; else the
/// readable source compiled in.
pub fn router(widget_dir: &Path) -> Router<AppState> {
    let read = |file: &str, source: &'static str| match std::fs::read(widget_dir.join(file)) {
        Ok(minified) => Bytes::from(minified),
        Err(_) => Bytes::from_static(source.as_bytes()),
    };
    let script = read("loader.min.js", LOADER_JS);
    let engage = read("engage.min.js", ENGAGE_JS);
    Router::new()
        .route("/widget.js", get(move || loader(script.clone())))
        .route("/widget-engage.js", get(move || loader(engage.clone())))
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
