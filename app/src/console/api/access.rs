//! The check every console server function makes first (server only).

use leptos::prelude::*;

use crate::server::auth::{AuthError, authorize};
use crate::server::state::AppState;
use crate::server::store::users::{Role, User};

/// Error texts the console's pages recognise.
pub const UNAUTHORIZED: &str = "unauthorized";
pub const FORBIDDEN: &str = "forbidden";

/// Signed in (and an administrator when `admin_only`), and not a cross-site request.
pub async fn require(admin_only: bool) -> Result<(AppState, User), ServerFnError> {
    let state = expect_context::<AppState>();
    let session: tower_sessions::Session =
        leptos_axum::extract().await.map_err(|_| ServerFnError::new(UNAUTHORIZED))?;
    let parts = use_context::<http::request::Parts>().ok_or_else(|| ServerFnError::new(UNAUTHORIZED))?;
    let needs = admin_only.then_some(Role::Admin);
    match authorize(&state.engine, &session, &parts.headers, needs).await {
        Ok(user) => Ok((state, user)),
        Err(AuthError::Forbidden) => Err(ServerFnError::new(FORBIDDEN)),
        Err(AuthError::CrossSite) => Err(ServerFnError::new("cross-site request refused")),
        Err(_) => Err(ServerFnError::new(UNAUTHORIZED)),
    }
}

/// Logs a storage error and answers with a generic message.
pub fn internal(e: impl std::fmt::Display) -> ServerFnError {
    tracing::error!(error = %e, "console action failed");
    ServerFnError::new("something went wrong")
}
