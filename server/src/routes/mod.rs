//! The router: one router per resource, merged here with the Leptos routes.

mod agents;
mod chat;
mod conversations;
mod embed;
mod health;
mod mcp;
mod payments;
mod visitors;
mod widget_js;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use leptos_axum::{LeptosRoutes, generate_route_list};
use parley_app::server::state::AppState;
use parley_app::{App, shell};

/// The whole HTTP surface of Parley.
pub fn router(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let api = Router::new()
        .merge(visitors::router())
        .merge(chat::router())
        .merge(conversations::router())
        .merge(agents::router())
        .layer(DefaultBodyLimit::max(state.http.max_body_bytes));
    Router::new()
        .merge(api)
        .merge(widget_js::router())
        .merge(health::router())
        .merge(payments::router())
        .merge(mcp::router(&state))
        .leptos_routes(&state, routes, {
            let options = state.leptos_options.clone();
            move || shell(options.clone())
        })
        .layer(axum::middleware::from_fn_with_state(state.clone(), embed::frame_policy))
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .with_state(state)
}
