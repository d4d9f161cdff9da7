//! Operators' notifications beyond the console's list (issue 43): each user's preferences, Web
//! Push to the browsers they subscribed ([`push`], VAPID in [`vapid`]) and the mail digest of
//! what nobody opened ([`digest`]). The notifications themselves are written with the change
//! that causes them (`store::operator_notifications`); this module only reads and sends them.

pub mod digest;
pub mod push;
pub mod vapid;

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::Engine;
use super::outbound;
use crate::secret::ApiKey;
use crate::store::notify_prefs::{self, Prefs};
use crate::store::operator_notifications::{self as notifications, KINDS, Notification};
use crate::store::users::User;
use crate::store::{DbError, push as push_store};

/// How Web Push is sent.
#[derive(Clone, Debug)]
pub struct PushSettings {
    /// A VAPID private key given by the configuration (a P-256 scalar, base64url); `None`: the
    /// key pair made on the first start and stored (sealed) in the database.
    pub vapid_private_key: Option<ApiKey>,
    /// The VAPID `sub` claim: `mailto:` or an `https:` address (`None`: the public URL).
    pub subject: Option<String>,
    /// How long a push service keeps an undelivered push (the `TTL` header).
    pub ttl: Duration,
}

impl Default for PushSettings {
    fn default() -> Self {
        PushSettings { vapid_private_key: None, subject: None, ttl: Duration::from_secs(12 * 3600) }
    }
}

/// Why a preference or a subscription was refused (`field`, reason), or the database failed.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("{1}")]
    Invalid(&'static str, String),
    #[error(transparent)]
    Db(#[from] DbError),
}

fn invalid(field: &'static str, why: impl Into<String>) -> NotifyError {
    NotifyError::Invalid(field, why.into())
}

/// Longest push endpoint accepted.
const MAX_ENDPOINT: usize = 2_048;
/// Longest digest delay: a day.
const MAX_DIGEST_DELAY_MIN: i64 = 1_440;

/// Base64url, with or without padding (browsers give it without).
pub(crate) fn unbase64(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text.trim().trim_end_matches('=')).ok()
}

impl Engine {
    /// The user's notification preferences.
    pub async fn notify_prefs(&self, user: &User) -> Result<Prefs, DbError> {
        notify_prefs::of_user(self.db(), &user.id).await
    }

    /// Saves the user's own preferences: known kinds only, a delay of 1 to 1,440 minutes.
    pub async fn save_notify_prefs(&self, user: &User, mut prefs: Prefs) -> Result<(), NotifyError> {
        for kind in &prefs.kinds {
            if !KINDS.contains(&kind.as_str()) {
                return Err(invalid("kinds", format!("unknown kind of notification `{kind}`")));
            }
        }
        prefs.kinds.sort_by_key(|k| KINDS.iter().position(|known| *known == k.as_str()));
        prefs.kinds.dedup();
        if !(1..=MAX_DIGEST_DELAY_MIN).contains(&prefs.digest_delay_min) {
            return Err(invalid("digest_delay_min", "the digest waits 1 to 1440 minutes"));
        }
        notify_prefs::save(self.db(), &user.id, &prefs, self.now_ms()).await?;
        Ok(())
    }

    /// The user's unread notifications, newest first.
    pub async fn unread_notifications(&self, user: &User, limit: i64) -> Result<Vec<Notification>, DbError> {
        notifications::unread(self.db(), &user.id, limit).await
    }

    /// Marks the user's notifications `ids` read (all of them when `ids` is `None`); how many.
    pub async fn mark_notifications_read(&self, user: &User, ids: Option<&[String]>) -> Result<u64, DbError> {
        match ids {
            Some(ids) => notifications::mark_read(self.db(), &user.id, ids, self.now_ms()).await,
            None => notifications::mark_all_read(self.db(), &user.id, self.now_ms()).await,
        }
    }

    /// Stores a browser's push subscription for the user, after checking it: an `https` endpoint
    /// (plain `http` and private addresses only where the outbound fence allows them, as for
    /// webhooks), a P-256 public key (65 bytes, a point on the curve) and a 16-byte secret.
    pub async fn push_subscribe(
        &self,
        user: &User,
        endpoint: &str,
        p256dh: &str,
        auth: &str,
    ) -> Result<(), NotifyError> {
        let endpoint = endpoint.trim();
        if endpoint.is_empty() || endpoint.len() > MAX_ENDPOINT {
            return Err(invalid("endpoint", "a push endpoint has 1 to 2048 characters"));
        }
        outbound::check_url(endpoint, self.0.settings.outbound).map_err(|e| invalid("endpoint", e.to_string()))?;
        let key = unbase64(p256dh).filter(|k| k.len() == 65);
        if key.as_deref().and_then(|k| p256::PublicKey::from_sec1_bytes(k).ok()).is_none() {
            return Err(invalid("p256dh", "p256dh must be an uncompressed P-256 public key (65 bytes, base64url)"));
        }
        if unbase64(auth).is_none_or(|a| a.len() != 16) {
            return Err(invalid("auth", "auth must be 16 bytes, base64url"));
        }
        push_store::subscribe(self.db(), &user.id, endpoint, p256dh.trim(), auth.trim(), self.now_ms()).await?;
        Ok(())
    }

    /// Forgets the user's subscription of `endpoint`; whether there was one.
    pub async fn push_unsubscribe(&self, user: &User, endpoint: &str) -> Result<bool, DbError> {
        push_store::unsubscribe(self.db(), &user.id, endpoint.trim()).await
    }
}
