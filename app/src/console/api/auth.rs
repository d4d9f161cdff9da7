//! Signing in and out, and who is signed in.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::{ConsoleUser, SameSite};
use crate::console::error::ConsoleError;
use crate::console::types::Me;

#[cfg(feature = "ssr")]
fn me(u: crate::server::store::users::User) -> Me {
    Me { id: u.id, name: u.name, email: u.email, role: u.role.as_str().into() }
}

/// Signs in; the answer is the person, or why not for the form.
#[server]
pub async fn sign_in(email: String, password: String) -> Result<Me, ConsoleError> {
    use crate::server::auth::{self, AuthError};
    let SameSite { state, session } = SameSite::extract().await?;
    match auth::sign_in(&state.engine, &state.auth, &session, &email, &password).await {
        Ok(u) => Ok(me(u)),
        Err(AuthError::BadCredentials) => Err(ConsoleError::invalid("password", "Wrong email or password.")),
        Err(e) => Err(ConsoleError::internal(e)),
    }
}

/// Signs out: the session is deleted.
#[server]
pub async fn sign_out() -> Result<(), ConsoleError> {
    let session = super::access::current_session().await?;
    crate::server::auth::sign_out(&session).await;
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
    use crate::server::{auth, store::users};
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    if new_password.chars().count() < 10 {
        return Err(ConsoleError::invalid("new_password", "The new password needs at least 10 characters."));
    }
    let (_, hash) = users::with_hash(state.engine.db(), &user.email).await?.ok_or(ConsoleError::Unauthorized)?;
    if !auth::verify_password(current, hash).await {
        return Err(ConsoleError::invalid("current", "The current password is wrong."));
    }
    let hash = auth::hash_password(new_password).await;
    users::set_password(state.engine.db(), &user.id, &hash).await?;
    Ok(())
}
