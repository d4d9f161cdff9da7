//! Signing in to the console: Argon2 password hashes (verified off the async threads), sessions
//! whose id is cycled at sign-in, failed attempts slowed down, and the check every console server
//! function makes first — signed in, allowed by role, and not a cross-site request.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tower_sessions::Session;

use super::engine::Engine;
use super::limits::{MINUTE, Rate};
use super::store::users::{self, Role, User};

/// Where the signed-in user's id lives in the session.
pub const USER_KEY: &str = "user_id";
/// Where the moment of signing in (ms) lives in the session.
pub const SIGNED_IN_KEY: &str = "signed_in_at";
/// Where the moment this session changed its user's password (ms) lives, if it did.
pub const RENEWED_KEY: &str = "renewed_at";
/// A console session ends this long after signing in, however active (it also ends after 12
/// hours without a request, and when the user's password changes).
pub const SESSION_LIFETIME_MS: i64 = 24 * 3_600_000;
/// Sign-in attempts for one email from all addresses together, per minute, by default (a burst
/// of this many, then one every `60 / n` s): distributed guessing at one account is slowed, and
/// a refusal never asks to wait more than a few seconds.
pub const PER_EMAIL_PER_MINUTE: u32 = 30;

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
    /// Too many attempts (from this address, for this email, or at once): try again later.
    #[error("too many sign-in attempts")]
    TooMany { retry_after: Duration },
    #[error("something went wrong")]
    Internal,
}

/// The key of an attempt in the [`Throttle`]: the email and the client's address (an IPv6
/// address by its /64, which one subscriber usually holds whole).
pub fn attempt_key(email: &str, ip: IpAddr) -> String {
    format!("{email} {}", crate::net::address_group(ip))
}

/// Sign-in attempts by email and address ([`attempt_key`]): guesses from one address slow that
/// address only, so nobody locks an account's owner out from elsewhere. Every attempt is counted as a failure when it is let through (a
/// success clears the count), and reserves its start time under the lock: beyond three, each
/// attempt starts at least 500 ms, 1 s, 2 s, … (up to 30 s) after the previous one, so parallel
/// guesses queue up like sequential ones. An attempt that would have to wait longer than the
/// short wait is refused at once, unverified. Forgotten after 15 minutes without attempts.
#[derive(Debug, Default)]
pub struct Throttle {
    entries: Mutex<HashMap<String, Attempts>>,
}

#[derive(Debug)]
struct Attempts {
    count: u32,
    last: Instant,
    /// The earliest start of the next attempt's verification.
    next_at: Instant,
}

const FORGET_AFTER: Duration = Duration::from_secs(900);

/// The spacing after the `n`th attempt.
fn spacing(n: u32) -> Duration {
    if n <= 3 {
        return Duration::ZERO;
    }
    Duration::from_millis(250u64.saturating_mul(1 << (n - 3).min(7))).min(Duration::from_secs(30))
}

impl Throttle {
    /// Reserves the next start for this email: how long to wait before verifying, or — when that
    /// would be longer than `max_wait` — `Err` with the time after which to try again.
    pub fn reserve(&self, email: &str, max_wait: Duration) -> Result<Duration, Duration> {
        let now = Instant::now();
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() > 10_000 {
            map.retain(|_, a| a.last.elapsed() < FORGET_AFTER || a.next_at > now);
            // Still large (guesses spread over many emails): keep only the emails that are slowed
            // down, so memory stays bounded.
            if map.len() > 100_000 {
                map.retain(|_, a| a.count > 3);
            }
        }
        let entry = map.entry(email.to_owned()).or_insert(Attempts { count: 0, last: now, next_at: now });
        if entry.last.elapsed() >= FORGET_AFTER && entry.next_at <= now {
            entry.count = 0;
        }
        let start = entry.next_at.max(now);
        let wait = start - now;
        if wait > max_wait {
            return Err(wait);
        }
        entry.count += 1;
        entry.last = now;
        entry.next_at = start + spacing(entry.count);
        Ok(wait)
    }

    /// A correct password clears the email's attempts.
    pub fn succeeded(&self, email: &str) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).remove(email);
    }
}

/// The limits of sign-in (settings).
#[derive(Clone, Copy, Debug)]
pub struct SignInLimits {
    /// Attempts per client IP per minute; 0 turns the limit off.
    pub per_ip_per_minute: u32,
    /// Attempts for one email from all addresses per minute; 0 turns the limit off.
    pub per_email_per_minute: u32,
    /// Password verifications running at once.
    pub concurrency: usize,
    /// How long an attempt may wait for its turn (per email, or for a verification slot)
    /// before it is refused.
    pub max_wait: Duration,
}

impl Default for SignInLimits {
    fn default() -> Self {
        SignInLimits {
            per_ip_per_minute: 10,
            per_email_per_minute: PER_EMAIL_PER_MINUTE,
            concurrency: 4,
            max_wait: Duration::from_secs(5),
        }
    }
}

/// Auth state shared by every request.
#[derive(Debug)]
pub struct Auth {
    pub throttle: Throttle,
    /// Attempts per email from all addresses ([`PER_EMAIL_PER_MINUTE`]).
    per_email: Arc<Rate>,
    /// Verified when the email is unknown, so both cases do the same work.
    dummy_hash: String,
    per_ip: Arc<Rate>,
    /// Permits for Argon2 verifications (each takes about 19 MiB while it runs).
    verifying: Arc<Semaphore>,
    max_wait: Duration,
    stats: Arc<VerifyStats>,
}

/// Counts of password verifications (tests and diagnostics).
#[derive(Debug, Default)]
struct VerifyStats {
    running: AtomicUsize,
    peak: AtomicUsize,
    total: AtomicUsize,
}

impl Auth {
    /// The sign-in state; a background task keeps the per-IP limiter's memory bounded (keys whose
    /// allowance is full again are dropped every minute).
    pub async fn new(limits: SignInLimits) -> Auth {
        let per_ip = Arc::new(Rate::new(limits.per_ip_per_minute, MINUTE, "sign-ins from this address"));
        let per_email = Arc::new(Rate::new(limits.per_email_per_minute, MINUTE, "sign-ins for this email"));
        let (weak_ip, weak_email) = (Arc::downgrade(&per_ip), Arc::downgrade(&per_email));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                let (Some(ip), Some(email)) = (weak_ip.upgrade(), weak_email.upgrade()) else { return };
                ip.prune();
                email.prune();
            }
        });
        Auth {
            throttle: Throttle::default(),
            per_email,
            dummy_hash: hash_password("not a real password".into()).await,
            per_ip,
            verifying: Arc::new(Semaphore::new(limits.concurrency.max(1))),
            max_wait: limits.max_wait,
            stats: Arc::default(),
        }
    }

    /// `(most verifications that ran at once, verifications so far)`.
    pub fn verification_stats(&self) -> (usize, usize) {
        (self.stats.peak.load(Ordering::SeqCst), self.stats.total.load(Ordering::SeqCst))
    }

    /// Counts an attempt from `ip` for `email` against the per-IP and the per-email limits.
    fn admit(&self, ip: IpAddr, email: &str) -> Result<(), AuthError> {
        let too_many = |refused: super::limits::Refused| AuthError::TooMany { retry_after: refused.retry_after };
        self.per_ip.check(ip).map_err(too_many)?;
        self.per_email.check(email).map_err(too_many)
    }

    /// Checks a password against a hash once a verification slot is free (waiting at most the
    /// short wait), on a blocking thread.
    pub async fn verify(&self, password: String, hash: String) -> Result<bool, AuthError> {
        let permit = tokio::time::timeout(self.max_wait, self.verifying.clone().acquire_owned())
            .await
            .map_err(|_| AuthError::TooMany { retry_after: Duration::from_secs(1) })?
            .map_err(|_| AuthError::Internal)?;
        let stats = self.stats.clone();
        tokio::task::spawn_blocking(move || {
            let running = stats.running.fetch_add(1, Ordering::SeqCst) + 1;
            stats.peak.fetch_max(running, Ordering::SeqCst);
            stats.total.fetch_add(1, Ordering::SeqCst);
            let ok = password_auth::verify_password(password, &hash).is_ok();
            stats.running.fetch_sub(1, Ordering::SeqCst);
            drop(permit);
            ok
        })
        .await
        .map_err(|_| AuthError::Internal)
    }
}

/// An Argon2 hash (computed on a blocking thread).
pub async fn hash_password(password: String) -> String {
    tokio::task::spawn_blocking(move || password_auth::generate_hash(password)).await.unwrap_or_default()
}

/// Checks a password against a hash (on a blocking thread), outside the sign-in limits (the CLI
/// and tests; requests go through [`Auth::verify`]).
pub async fn verify_password(password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || password_auth::verify_password(password, &hash).is_ok()).await.unwrap_or(false)
}

/// Signs in: the per-IP and per-email limits, then the turn of this email from this address
/// (awaited before anything is verified), then one verification slot; an unknown email is
/// verified against a dummy hash so it costs the same. A refusal is counted in
/// `parley_signin_refused_total` and logged with the email masked (not an audit row each: a
/// flood of guesses must not flood the audit log). On success the session id is cycled and the
/// user and the moment stored in the session.
pub async fn sign_in(
    engine: &Engine,
    auth: &Auth,
    session: &Session,
    ip: IpAddr,
    email: &str,
    password: &str,
) -> Result<User, AuthError> {
    let email = users::normalize_email(email);
    let refused = |reason: &'static str| {
        metrics::counter!("parley_signin_refused_total", "reason" => reason).increment(1);
        tracing::info!(email = %crate::engine::mail::masked(&email), %ip, reason, "sign-in refused");
    };
    auth.admit(ip, &email).inspect_err(|_| refused("too_many"))?;
    let key = attempt_key(&email, ip);
    let wait = auth.throttle.reserve(&key, auth.max_wait).map_err(|retry_after| {
        refused("too_many");
        AuthError::TooMany { retry_after }
    })?;
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
    let found = users::with_hash(engine.db(), &email).await.map_err(|_| AuthError::Internal)?;
    let (user, hash) = match found {
        Some((user, hash)) => (Some(user), hash),
        None => (None, auth.dummy_hash.clone()),
    };
    let verified = auth.verify(password.to_owned(), hash).await?;
    let Some(user) = user.filter(|_| verified) else {
        refused("wrong_credentials");
        return Err(AuthError::BadCredentials);
    };
    auth.throttle.succeeded(&key);
    session.cycle_id().await.map_err(|_| AuthError::Internal)?;
    session.insert(USER_KEY, &user.id).await.map_err(|_| AuthError::Internal)?;
    session.insert(SIGNED_IN_KEY, engine.now_ms()).await.map_err(|_| AuthError::Internal)?;
    let _ = users::touch_login(engine.db(), &user.id, engine.now_ms()).await;
    engine.audit(Some(&user), "sign_in", None, &format!("from {ip}")).await;
    Ok(user)
}

/// Changes a user's password: every other session of theirs ends; `session` (theirs) stays.
pub async fn change_password(engine: &Engine, session: &Session, user: &User, hash: &str) -> Result<(), AuthError> {
    let now = engine.now_ms();
    users::set_password(engine.db(), &user.id, hash, now).await.map_err(|_| AuthError::Internal)?;
    session.insert(RENEWED_KEY, now).await.map_err(|_| AuthError::Internal)
}

/// Signs out: the session is deleted.
pub async fn sign_out(session: &Session) {
    let _ = session.flush().await;
}

/// The signed-in user, if any: a session past its lifetime ([`SESSION_LIFETIME_MS`]) or older
/// than the user's last password change is over (and emptied).
pub async fn current_user(engine: &Engine, session: &Session) -> Option<User> {
    let id: String = session.get(USER_KEY).await.ok().flatten()?;
    let since: i64 = session.get(SIGNED_IN_KEY).await.ok().flatten().unwrap_or(0);
    let renewed: i64 = session.get(RENEWED_KEY).await.ok().flatten().unwrap_or(0);
    let (user, sessions_after) = users::for_session(engine.db(), &id).await.ok().flatten()?;
    if since.max(renewed) < sessions_after || engine.now_ms().saturating_sub(since) > SESSION_LIFETIME_MS {
        let _ = session.flush().await;
        return None;
    }
    Some(user)
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
pub async fn ensure_first_admin(engine: &Engine) -> Result<Option<(String, String)>, crate::store::DbError> {
    if users::count(engine.db()).await? > 0 {
        return Ok(None);
    }
    let password = one_time_password();
    let email = "admin@parley.local".to_owned();
    let inserted = users::insert(
        engine.db(),
        &email,
        "Administrator",
        Role::Admin,
        &hash_password(password.clone()).await,
        engine.now_ms(),
    )
    .await;
    match inserted {
        // Another replica starting on the same new database made it at the same moment.
        Err(crate::store::DbError::Database(d)) if d.is_unique_violation() => Ok(None),
        Err(e) => Err(e),
        Ok(_) => Ok(Some((email, password))),
    }
}

/// Writes the first administrator's one-time password to `<dir>/first-admin-password.txt`,
/// readable by its owner only (mode 0600), and returns the file's path. The password goes to no
/// log; the path does.
pub fn write_password_file(dir: &Path, email: &str, password: &str) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir)?;
    let path = dir.join("first-admin-password.txt");
    // A file left from before could have wider permissions: start from a new one.
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    writeln!(
        file,
        "Parley console, first sign-in (one-time password: change it in the console, then delete this file)\n\
         email: {email}\npassword: {password}"
    )?;
    file.sync_all()?;
    Ok(path)
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
    fn attempts_are_spaced_after_three_and_a_success_resets() {
        let t = Throttle::default();
        let long = Duration::from_secs(3600);
        for _ in 0..4 {
            assert_eq!(t.reserve("a@x", long), Ok(Duration::ZERO));
        }
        // The fifth starts 500 ms after the fourth, the sixth 1 s after that: reserved at once,
        // so attempts made in parallel wait as sequential ones would.
        let fifth = t.reserve("a@x", long).unwrap();
        assert!(fifth > Duration::from_millis(400) && fifth <= Duration::from_millis(500), "{fifth:?}");
        let sixth = t.reserve("a@x", long).unwrap();
        assert!(sixth > Duration::from_millis(1400) && sixth <= Duration::from_millis(1500), "{sixth:?}");
        // Past the longest wait: refused at once, with when to try again, and not counted.
        let refused = t.reserve("a@x", Duration::from_secs(1)).unwrap_err();
        assert!(refused > Duration::from_millis(3400), "{refused:?}");
        assert_eq!(t.reserve("b@x", long), Ok(Duration::ZERO));
        t.succeeded("a@x");
        assert_eq!(t.reserve("a@x", long), Ok(Duration::ZERO));
        assert_eq!(spacing(30), Duration::from_secs(30));
    }

    #[test]
    fn attempts_are_keyed_by_email_and_address_with_ipv6_by_its_64() {
        let key = |ip: &str| attempt_key("a@x", ip.parse().unwrap());
        assert_eq!(key("203.0.113.7"), "a@x 203.0.113.7");
        assert_eq!(key("::ffff:203.0.113.7"), "a@x 203.0.113.7");
        assert_eq!(key("2001:db8:1:2:aaaa::1"), key("2001:db8:1:2:bbbb::2"), "one /64");
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        // Guesses from one address slow that address only.
        let t = Throttle::default();
        let long = Duration::from_secs(3600);
        let (guesser, owner) = (key("203.0.113.7"), key("198.51.100.9"));
        for _ in 0..8 {
            t.reserve(&guesser, long).unwrap();
        }
        assert!(t.reserve(&guesser, Duration::from_secs(1)).is_err());
        assert_eq!(t.reserve(&owner, Duration::from_secs(1)), Ok(Duration::ZERO));
    }

    #[test]
    fn the_password_file_is_for_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_password_file(dir.path(), "admin@x", "pw-1234").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("admin@x") && text.contains("pw-1234"), "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // Written again (a second first start), it replaces the old file.
        write_password_file(dir.path(), "admin@x", "pw-5678").unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("pw-5678"));
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
