//! Operators' notifications (issue 43): the asking user's unread list and preferences, marking
//! read, and their browsers' Web Push subscriptions. Each user sees and changes only their own.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
#[cfg(feature = "ssr")]
use crate::console::types::NotificationItem;
use crate::console::types::{NotifyPage, UnreadView};

#[cfg(feature = "ssr")]
fn notify_error(e: parley_engine::engine::notify::NotifyError) -> ConsoleError {
    use parley_engine::engine::notify::NotifyError;
    match e {
        NotifyError::Invalid(field, why) => ConsoleError::invalid(field, why),
        NotifyError::Db(e) => e.into(),
    }
}

/// The asking user's unread notifications (50 newest) and preferences, and the VAPID public key.
#[server]
pub async fn notifications_page() -> Result<NotifyPage, ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let unread = state.engine.unread_notifications(&user, 50).await?;
    let prefs = state.engine.notify_prefs(&user).await?;
    let vapid = state.engine.vapid().await.map_err(|e| {
        tracing::warn!(error = %e, "no VAPID key");
        ConsoleError::Conflict("Web Push is not available on this server.".into())
    })?;
    Ok(NotifyPage {
        unread: unread
            .into_iter()
            .map(|n| NotificationItem {
                id: n.id,
                kind: n.kind,
                conversation_id: n.conversation_id,
                created_at: n.created_at,
            })
            .collect(),
        kinds: prefs.kinds,
        in_console: prefs.in_console,
        push: prefs.push,
        digest: prefs.digest,
        digest_delay_min: prefs.digest_delay_min,
        mail_enabled: state.engine.mail_enabled(),
        vapid_public_key: vapid.public,
    })
}

/// How many unread notifications the asking user has (the tab title), and whether they want
/// the console's sound and desktop notification.
#[server]
pub async fn unread_count() -> Result<UnreadView, ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let count = parley_engine::store::operator_notifications::unread_count(state.engine.db(), &user.id).await?;
    Ok(UnreadView { count, in_console: state.engine.notify_prefs(&user).await?.in_console })
}

/// Saves the asking user's preferences: `kinds` comma-separated, the channels, the digest's
/// delay in minutes (1 to 1,440). A digest needs mail set up on the server.
#[server]
pub async fn save_notification_prefs(
    #[server(default)] kinds: String,
    #[server(default)] in_console: bool,
    #[server(default)] push: bool,
    #[server(default)] digest: bool,
    digest_delay_min: i64,
) -> Result<(), ConsoleError> {
    use parley_engine::store::notify_prefs::Prefs;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    if digest && !state.engine.mail_enabled() {
        return Err(ConsoleError::invalid("digest", "Email is not set up on this server (PARLEY_SMTP_HOST)."));
    }
    let kinds: Vec<String> = kinds.split(',').map(str::trim).filter(|k| !k.is_empty()).map(str::to_owned).collect();
    let prefs = Prefs { kinds, in_console, push, digest, digest_delay_min };
    state.engine.save_notify_prefs(&user, prefs.clone()).await.map_err(notify_error)?;
    let detail = format!(
        "kinds {}; console {in_console}, push {push}, digest {digest} after {digest_delay_min} min",
        prefs.kinds.join(",")
    );
    state.engine.audit(Some(&user), "notifications.prefs", Some(&user.email), &detail).await;
    Ok(())
}

/// Marks the asking user's notifications read: `ids` comma-separated, or every one when empty.
#[server]
pub async fn mark_notifications_read(#[server(default)] ids: String) -> Result<u64, ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let ids: Vec<String> = ids.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    let which = if ids.is_empty() { None } else { Some(ids.as_slice()) };
    Ok(state.engine.mark_notifications_read(&user, which).await?)
}

/// Subscribes the asking user's browser to Web Push (what `PushSubscription.toJSON()` gives:
/// the endpoint and the `p256dh` and `auth` keys, base64url).
#[server]
pub async fn push_subscribe(endpoint: String, p256dh: String, auth: String) -> Result<(), ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    state.engine.push_subscribe(&user, &endpoint, &p256dh, &auth).await.map_err(notify_error)?;
    state.engine.audit(Some(&user), "notifications.push_subscribe", Some(&user.email), "").await;
    Ok(())
}

/// Forgets the asking user's subscription of `endpoint`.
#[server]
pub async fn push_unsubscribe(endpoint: String) -> Result<bool, ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    Ok(state.engine.push_unsubscribe(&user, &endpoint).await?)
}
