//! Signing in and out, and who is signed in.

use leptos::prelude::*;

use crate::console::types::Me;

/// Signs in; the answer is the person, or an error message for the form.
#[server]
pub async fn sign_in(email: String, password: String) -> Result<Me, ServerFnError> {
    use crate::server::auth;
    let state = expect_context::<crate::server::state::AppState>();
    let parts = use_context::<http::request::Parts>().ok_or_else(|| ServerFnError::new("bad request"))?;
    if auth::is_cross_site(&parts.headers) {
        return Err(ServerFnError::new("cross-site request refused"));
    }
    let session: tower_sessions::Session = leptos_axum::extract().await?;
    match auth::sign_in(&state.engine, &state.auth, &session, &email, &password).await {
        Ok(u) => Ok(Me { id: u.id, name: u.name, email: u.email, role: u.role.as_str().into() }),
        Err(auth::AuthError::BadCredentials) => Err(ServerFnError::new("Wrong email or password.")),
        Err(e) => Err(super::access::internal(e)),
    }
}

#[server]
pub async fn sign_out() -> Result<(), ServerFnError> {
    let session: tower_sessions::Session = leptos_axum::extract().await?;
    crate::server::auth::sign_out(&session).await;
    Ok(())
}

/// The signed-in person, or `None`.
#[server]
pub async fn who_am_i() -> Result<Option<Me>, ServerFnError> {
    match super::access::require(false).await {
        Ok((_, u)) => Ok(Some(Me { id: u.id, name: u.name, email: u.email, role: u.role.as_str().into() })),
        Err(e) if e.to_string().contains(super::access::UNAUTHORIZED) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Changes the signed-in person's password.
#[server]
pub async fn change_password(current: String, new_password: String) -> Result<(), ServerFnError> {
    use crate::server::{auth, store::users};
    let (state, user) = super::access::require(false).await?;
    if new_password.chars().count() < 10 {
        return Err(ServerFnError::new("The new password needs at least 10 characters."));
    }
    let (_, hash) = users::with_hash(state.engine.db(), &user.email)
        .await
        .map_err(super::access::internal)?
        .ok_or_else(|| ServerFnError::new("unauthorized"))?;
    if !auth::verify_password(current, hash).await {
        return Err(ServerFnError::new("The current password is wrong."));
    }
    let hash = auth::hash_password(new_password).await;
    users::set_password(state.engine.db(), &user.id, &hash).await.map_err(super::access::internal)?;
    Ok(())
}
