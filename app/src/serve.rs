//! The server's Leptos routes: the pages and the console rendered on the server, and the app's
//! files with its 404 page. They are assembled here, not in the server crate, so that the
//! rendering code of every view is generated once, in this crate: built in the server crate, the
//! same generic code was generated again in the server's library and in its test harness, some
//! two minutes of each release build.

use axum::Router;
use leptos_axum::{LeptosRoutes, generate_route_list};

use crate::server::state::AppState;
use crate::{App, shell};

/// The server-rendered pages; `context` runs for every request before rendering (the server
/// hands Leptos the page's CSP nonce with it).
pub fn pages(state: &AppState, context: fn()) -> Router<AppState> {
    let options = state.leptos_options.clone();
    Router::new().leptos_routes_with_context(state, generate_route_list(App), context, move || shell(options.clone()))
}

/// A router whose fallback serves the site's files (`/pkg/…`) and renders the app's 404 page.
pub fn files_and_not_found(context: fn()) -> Router<AppState> {
    Router::new().fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(context, shell))
}
