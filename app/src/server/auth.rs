//! Signing in to the console: Argon2 password hashes (verified off the async threads), sessions
//! whose id is cycled at sign-in, failed attempts slowed down, and the check every console server
//! function makes first — signed in, allowed by role, and not a cross-site request.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tower_sessions::Session;

use super::engine::Engine;
use super::store::users::{self, Role, User};

/// Where the signed-in user's id lives in the session.
pub const USER_KEY: &str = "user_id";

/// Why a sign-in or an access check failed.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum AuthError {
    #[error("wrong email or password")]
    BadCredentials,
    #[error("sign in first")]
    Unauthorized,
    #[error("your role may not do this")]
    Forbidden,
    #[error("cross-site request refused")]
    CrossSite,
    #[error("something went wrong")]
    Internal,
}

/// Failed sign-ins by email: each failure beyond three doubles the wait before the next attempt
/// is even checked (up to 30 s); a success clears it.
#[derive(Debug, Default)]
pub struct Throttle {
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

impl Throttle {
    /// How long to wait before checking an attempt for this email.
    pub fn delay(&self, email: &str) -> Duration {
        let map = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(email) {
            // Forgotten after 15 minutes.
            Some((n, at)) if at.elapsed() < Duration::from_secs(900) && *n > 3 => {
                Duration::from_millis(250u64.saturating_mul(1 << (n - 3).min(7))).min(Duration::from_secs(30))
            }
            _ => Duration::ZERO,
        }
    }

    pub fn failed(&self, email: &str) {
        let mut map = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() > 10_000 {
            map.retain(|_, (_, at)| at.elapsed() < Duration::from_secs(900));
        }
        let entry = map.entry(email.to_owned()).or_insert((0, Instant::now()));
        entry.0 += 1;
        entry.1 = Instant::now();
    }

    pub fn succeeded(&self, email: &str) {
        self.failures.lock().unwrap_or_else(|p| p.into_inner()).remove(email);
    }
}

/// Auth state shared by every request.
#[derive(Debug)]
pub struct Auth {
    pub throttle: Throttle,
    /// Verified when the email is unknown, so both cases take as long.
    dummy_hash: String,
}

impl Auth {
    pub async fn new() -> Auth {
        Auth { throttle: Throttle::default(), dummy_hash: hash_password("not a real password".into()).await }
    }
}

/// An Argon2 hash (computed on a blocking thread).
pub async fn hash_password(password: String) -> String {
    tokio::task::spawn_blocking(move || password_auth::generate_hash(password)).await.unwrap_or_default()
}

/// Checks a password against a hash (on a blocking thread).
pub async fn verify_password(password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || password_auth::verify_password(password, &hash).is_ok()).await.unwrap_or(false)
}

/// Signs in: checks the password, cycles the session id and stores the user in the session.
pub async fn sign_in(
    engine: &Engine,
    auth: &Auth,
    session: &Session,
    email: &str,
    password: &str,
) -> Result<User, AuthError> {
    let email = users::normalize_email(email);
    let wait = auth.throttle.delay(&email);
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
    let found = users::with_hash(engine.db(), &email).await.map_err(|_| AuthError::Internal)?;
    let (user, hash) = match found {
        Some(found) => found,
        None => {
            let _ = verify_password(password.to_owned(), auth.dummy_hash.clone()).await;
            auth.throttle.failed(&email);
            return Err(AuthError::BadCredentials);
        }
    };
    if !verify_password(password.to_owned(), hash).await {
        auth.throttle.failed(&email);
        return Err(AuthError::BadCredentials);
    }
    auth.throttle.succeeded(&email);
    session.cycle_id().await.map_err(|_| AuthError::Internal)?;
    session.insert(USER_KEY, &user.id).await.map_err(|_| AuthError::Internal)?;
    let _ = users::touch_login(engine.db(), &user.id, engine.now_ms()).await;
    Ok(user)
}

/// Signs out: the session is deleted.
pub async fn sign_out(session: &Session) {
    let _ = session.flush().await;
}

/// The signed-in user, if any.
pub async fn current_user(engine: &Engine, session: &Session) -> Option<User> {
    let id: String = session.get(USER_KEY).await.ok().flatten()?;
    users::by_id(engine.db(), &id).await.ok().flatten()
}

/// A request whose `Origin` names another site than the `Host` it was sent to.
pub fn is_cross_site(headers: &http::HeaderMap) -> bool {
    let Some(origin) = headers.get(http::header::ORIGIN).and_then(|v| v.to_str().ok()) else { return false };
    let host = headers.get(http::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let origin_host = origin.split_once("://").map(|(_, rest)| rest).unwrap_or(origin);
    !origin_host.eq_ignore_ascii_case(host)
}

/// The check every console action makes first.
pub async fn authorize(
    engine: &Engine,
    session: &Session,
    headers: &http::HeaderMap,
    needs: Option<Role>,
) -> Result<User, AuthError> {
    if is_cross_site(headers) {
        return Err(AuthError::CrossSite);
    }
    let user = current_user(engine, session).await.ok_or(AuthError::Unauthorized)?;
    match needs {
        Some(Role::Admin) if user.role != Role::Admin => Err(AuthError::Forbidden),
        _ => Ok(user),
    }
}

/// On the very first start (no users), creates an administrator with a one-time password and
/// returns the credentials to print once.
pub async fn ensure_first_admin(engine: &Engine) -> Result<Option<(String, String)>, crate::server::store::DbError> {
    if users::count(engine.db()).await? > 0 {
        return Ok(None);
    }
    let password = one_time_password();
    let email = "admin@parley.local".to_owned();
    users::insert(
        engine.db(),
        &email,
        "Administrator",
        Role::Admin,
        &hash_password(password.clone()).await,
        engine.now_ms(),
    )
    .await?;
    Ok(Some((email, password)))
}

/// A random password of 16 URL-safe characters (96 bits).
pub fn one_time_password() -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 12]>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_grows_after_three_failures_and_resets() {
        let t = Throttle::default();
        for _ in 0..3 {
            t.failed("a@x");
        }
        assert_eq!(t.delay("a@x"), Duration::ZERO);
        t.failed("a@x");
        assert_eq!(t.delay("a@x"), Duration::from_millis(500));
        t.failed("a@x");
        assert_eq!(t.delay("a@x"), Duration::from_millis(1000));
        for _ in 0..20 {
            t.failed("a@x");
        }
        assert_eq!(t.delay("a@x"), Duration::from_secs(30));
        assert_eq!(t.delay("b@x"), Duration::ZERO);
        t.succeeded("a@x");
        assert_eq!(t.delay("a@x"), Duration::ZERO);
    }

    #[test]
    fn cross_site_requests_are_recognised() {
        let mut h = http::HeaderMap::new();
        h.insert(http::header::HOST, "127.0.0.1:3000".parse().unwrap());
        assert!(!is_cross_site(&h));
        h.insert(http::header::ORIGIN, "http://127.0.0.1:3000".parse().unwrap());
        assert!(!is_cross_site(&h));
        h.insert(http::header::ORIGIN, "http://evil.example".parse().unwrap());
        assert!(is_cross_site(&h));
    }

    #[tokio::test]
    async fn passwords_hash_and_verify() {
        let hash = hash_password("correct horse".into()).await;
        assert!(hash.starts_with("$argon2"));
        assert!(verify_password("correct horse".into(), hash.clone()).await);
        assert!(!verify_password("wrong".into(), hash).await);
    }
}
