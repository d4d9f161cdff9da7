//! The state every request handler and server function shares.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use parley_engine::engine::Engine;

/// Settings the HTTP layer needs besides the engine.
#[derive(Clone, Debug)]
pub struct HttpSettings {
    /// Where the app is reached, e.g. `http://127.0.0.1:3000` (used in snippets and pay URLs).
    pub public_url: String,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: parley_engine::net::TrustedProxies,
    /// The header (lower case) in which the proxy names the visitor's country, if any.
    pub country_header: Option<String>,
    /// Where the panel's own bundle is (`.ci/build-widget.sh` writes it).
    pub widget_dir: std::path::PathBuf,
}

/// Shared application state, handed to `leptos_routes` and to every axum handler.
#[derive(Clone, Debug)]
pub struct AppState {
    /// Leptos rendering options (site root, output name, address).
    pub leptos_options: LeptosOptions,
    /// The engine: database, tools, live channels, models.
    pub engine: Engine,
    /// HTTP-level settings.
    pub http: Arc<HttpSettings>,
    /// Console sign-in: throttling of failed attempts.
    pub auth: Arc<parley_engine::auth::Auth>,
    /// Abuse limits of the public API.
    pub limits: Arc<parley_engine::limits::Limits>,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}
