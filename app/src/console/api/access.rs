//! Who is asking (server only): [`ConsoleUser`] and [`AdminUser`] are what a console server
//! function takes first, the way an axum handler takes an extractor. Both refuse cross-site
//! requests and answer with a [`ConsoleError`] the page can match.
//!
//! While a page renders on the server, a server function loses the request's context after its
//! first real wait; so these read the context before waiting on anything, and a server function
//! calls one of them before anything else.

use axum::extract::FromRequestParts;
use leptos::prelude::*;
use tower_sessions::Session;

use crate::console::error::ConsoleError;
use crate::server::state::AppState;
use parley_engine::auth::{AuthError, authorize, is_cross_site};
use parley_engine::store::users::{Role, User};

/// A signed-in person (operator or administrator) asking from the console itself.
pub struct ConsoleUser {
    /// The server's state.
    pub state: AppState,
    /// The person.
    pub user: User,
}

/// A signed-in administrator asking from the console itself.
pub struct AdminUser {
    /// The server's state.
    pub state: AppState,
    /// The administrator.
    pub user: User,
}

impl ConsoleUser {
    /// The person asking, or why not.
    pub async fn extract() -> Result<Self, ConsoleError> {
        let (state, user) = signed_in(None).await?;
        Ok(ConsoleUser { state, user })
    }
}

impl AdminUser {
    /// The administrator asking, or why not.
    pub async fn extract() -> Result<Self, ConsoleError> {
        let (state, user) = signed_in(Some(Role::Admin)).await?;
        Ok(AdminUser { state, user })
    }
}

/// The request of a console call that needs no one signed in (signing in): the state and the
/// session, from the console itself.
pub struct SameSite {
    /// The server's state.
    pub state: AppState,
    /// The browser's session.
    pub session: Session,
}

impl SameSite {
    /// The request, or [`ConsoleError::CrossSite`].
    pub async fn extract() -> Result<Self, ConsoleError> {
        let (state, mut parts) = context()?;
        if is_cross_site(&parts.headers) {
            return Err(ConsoleError::CrossSite);
        }
        let session = session(&mut parts).await?;
        Ok(SameSite { state, session })
    }
}

/// The browser's session, whoever is asking (signing out).
pub async fn current_session() -> Result<Session, ConsoleError> {
    let (_, mut parts) = context()?;
    session(&mut parts).await
}

async fn signed_in(needs: Option<Role>) -> Result<(AppState, User), ConsoleError> {
    let (state, mut parts) = context()?;
    let session = session(&mut parts).await?;
    match authorize(&state.engine, &session, &parts.headers, needs).await {
        Ok(user) => Ok((state, user)),
        Err(AuthError::Forbidden) => Err(ConsoleError::Forbidden),
        Err(AuthError::CrossSite) => Err(ConsoleError::CrossSite),
        Err(_) => Err(ConsoleError::Unauthorized),
    }
}

/// The state and the request head, read before any wait.
fn context() -> Result<(AppState, http::request::Parts), ConsoleError> {
    let state = expect_context::<AppState>();
    let parts = use_context::<http::request::Parts>().ok_or(ConsoleError::Unauthorized)?;
    Ok((state, parts))
}

async fn session(parts: &mut http::request::Parts) -> Result<Session, ConsoleError> {
    Session::from_request_parts(parts, &()).await.map_err(|_| ConsoleError::Unauthorized)
}
