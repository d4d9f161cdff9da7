//! The router: one router per resource, merged here with the Leptos routes.

mod agents;
mod attachments;
mod chat;
mod console;
mod conversations;
mod csp;
mod embed;
mod embed_page;
mod exports;
mod health;
mod mcp;
mod payments;
mod request_id;
mod visitors;
mod widget_js;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use parley_app::server::state::AppState;
use parley_engine::store::sessions::DbSessionStore;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};

/// The whole HTTP surface of Parley.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .merge(visitors::router())
        .merge(chat::router())
        .merge(conversations::router())
        .merge(agents::router())
        .layer(DefaultBodyLimit::max(state.http.max_body_bytes));
    // The pages and the console: the only routes with (console) sessions.
    let secure = state.http.public_url.starts_with("https://");
    let sessions = SessionManagerLayer::new(DbSessionStore::new(state.engine.db().clone()))
        .with_name("parley_session")
        .with_secure(secure)
        .with_http_only(true)
        .with_same_site(SameSite::Strict)
        .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::hours(12)));
    let app = Router::new()
        .merge(console::router())
        .merge(exports::router())
        .merge(embed_page::router(&state))
        .merge(parley_app::serve::pages(&state, csp::provide_nonce))
        .layer(axum::middleware::from_fn_with_state(state.clone(), console::gate))
        .layer(sessions)
        .layer(axum::middleware::from_fn_with_state(state.clone(), csp::page_policy));
    // The app's files and its 404 page: the same page policy, no sessions.
    let files_and_not_found = parley_app::serve::files_and_not_found(csp::provide_nonce)
        .layer(axum::middleware::from_fn_with_state(state.clone(), csp::page_policy))
        .with_state(state.clone());
    Router::new()
        .merge(api)
        // Images: a body limit of their own.
        .merge(attachments::router())
        .merge(widget_js::router(&state.http.widget_dir))
        .merge(health::router())
        .merge(payments::router(&state.engine.services().payments))
        .merge(mcp::router(&state))
        .merge(app)
        .fallback_service(files_and_not_found)
        // HTML and JSON are compressed (brotli or gzip, as the browser accepts); event streams,
        // images and what is already compressed (the widget's precompressed assets) never.
        // Quality 4: the console's 2.6 MB bundle compresses in tens of milliseconds (the default,
        // brotli 11, took seconds and held up its hydration); the widget's own assets are
        // precompressed at build with brotli 11.
        .layer(
            tower_http::compression::CompressionLayer::new()
                .quality(tower_http::compression::CompressionLevel::Precise(4)),
        )
        .layer(axum::middleware::from_fn(request_id::request_id))
        .with_state(state)
}
