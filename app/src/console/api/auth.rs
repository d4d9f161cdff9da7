//! Signing in and out, and who is signed in.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::{ConsoleUser, SameSite};
use crate::console::error::ConsoleError;
use crate::console::types::Me;

#[cfg(feature = "ssr")]
fn me(u: parley_engine::store::users::User) -> Me {
    Me { id: u.id, name: u.name, email: u.email, role: u.role.as_str().into() }
}

/// What the sign-in form says when the email or the password is wrong.
pub const WRONG_CREDENTIALS: &str = "Wrong email or password.";

/// Signs in; the answer is the person, or why not for the form.
#[server]
pub async fn sign_in(email: String, password: String) -> Result<Me, ConsoleError> {
    use parley_engine::auth;
    let SameSite { state, session } = SameSite::extract().await?;
    let ip = client_ip(&state).await?;
    // (Both sign-in paths are recorded in the audit log by `auth::sign_in`.)
    match auth::sign_in(&state.engine, &state.auth, &session, ip, &email, &password).await {
        Ok(u) => Ok(me(u)),
        Err(e) => Err(refusal(e)),
    }
}

/// Why a sign-in or a password check was refused, for the form.
#[cfg(feature = "ssr")]
fn refusal(e: parley_engine::auth::AuthError) -> ConsoleError {
    use parley_engine::auth::AuthError;
    match e {
        AuthError::BadCredentials => ConsoleError::invalid("password", WRONG_CREDENTIALS),
        AuthError::TooMany { retry_after } => ConsoleError::TooMany(retry_after.as_secs_f64().ceil().max(1.0) as u64),
        e => ConsoleError::internal(e),
    }
}

/// The client's address: the socket's peer, or behind a trusted proxy the address it names.
#[cfg(feature = "ssr")]
async fn client_ip(state: &crate::server::state::AppState) -> Result<std::net::IpAddr, ConsoleError> {
    use axum::extract::ConnectInfo;
    let ConnectInfo(peer) =
        leptos_axum::extract::<ConnectInfo<std::net::SocketAddr>>().await.map_err(ConsoleError::internal)?;
    let headers = leptos_axum::extract::<http::HeaderMap>().await.map_err(ConsoleError::internal)?;
    Ok(state.http.trusted_proxies.client_ip(peer, &headers))
}

/// Signs out: the session is deleted. Only from the console's own pages (a cross-site request
/// is refused, as for every other change).
#[server]
pub async fn sign_out() -> Result<(), ConsoleError> {
    let SameSite { session, .. } = SameSite::extract().await?;
    parley_engine::auth::sign_out(&session).await;
    Ok(())
}

/// The signed-in person, or `None`.
#[server]
pub async fn who_am_i() -> Result<Option<Me>, ConsoleError> {
    match ConsoleUser::extract().await {
        Ok(asking) => Ok(Some(me(asking.user))),
        Err(ConsoleError::Unauthorized) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Changes the signed-in person's password.
#[server]
pub async fn change_password(current: String, new_password: String) -> Result<(), ConsoleError> {
    use parley_engine::{auth, store::users};
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    if new_password.chars().count() < 10 {
        return Err(ConsoleError::invalid("new_password", "The new password needs at least 10 characters."));
    }
    let (_, hash) = users::with_hash(state.engine.db(), &user.email).await?.ok_or(ConsoleError::Unauthorized)?;
    if !state.auth.verify(current, hash).await.map_err(refusal)? {
        return Err(ConsoleError::invalid("current", "The current password is wrong."));
    }
    let hash = auth::hash_password(new_password).await;
    // Every other browser signed in as this user is signed out; this one stays.
    let session = super::access::current_session().await?;
    auth::change_password(&state.engine, &session, &user, &hash).await.map_err(refusal)?;
    Ok(())
}
