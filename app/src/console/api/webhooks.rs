//! Outbound webhooks (administrators only): an agent's endpoints, added here with a secret shown
//! once, turned on and off, deleted; their delivery log and "send again".

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{NewEndpoint, WebhooksView};

/// Deliveries and attempts listed per endpoint.
#[cfg(feature = "ssr")]
const LOGGED: i64 = 50;

/// An agent's endpoints with their recent deliveries and attempts.
#[server]
pub async fn agent_webhooks(agent_id: String) -> Result<WebhooksView, ConsoleError> {
    use crate::console::types::{AttemptItem, DeliveryItem, EndpointItem};
    use parley_engine::store::{agents, webhooks};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let mut endpoints = Vec::new();
    for e in webhooks::of_agent(db, &agent.id).await? {
        let deliveries = webhooks::deliveries(db, &e.id, LOGGED).await?;
        let attempts = webhooks::attempts(db, &e.id, LOGGED).await?;
        endpoints.push(EndpointItem {
            events: e.events(),
            enabled: e.is_enabled(),
            id: e.id,
            url: e.url,
            prefix: e.prefix,
            disabled_reason: e.disabled_reason,
            last_success_at: e.last_success_at,
            created_at: e.created_at,
            deliveries: deliveries
                .into_iter()
                .map(|d| DeliveryItem {
                    id: d.id,
                    event: d.event,
                    conversation_id: d.conversation_id,
                    status: d.status,
                    attempts: d.attempts,
                    next_attempt_at: d.next_attempt_at,
                    last_status: d.last_status,
                    last_error: d.last_error,
                    created_at: d.created_at,
                    payload: d.payload,
                })
                .collect(),
            attempts: attempts
                .into_iter()
                .map(|(delivery_id, at, status, error, duration_ms)| AttemptItem {
                    delivery_id,
                    at,
                    status,
                    error,
                    duration_ms,
                })
                .collect(),
        });
    }
    Ok(WebhooksView { agent_id: agent.id, endpoints, allow_private: state.engine.settings().outbound.allow_private })
}

/// Adds an endpoint: `url`, and `events`, comma-separated names. The answer holds its signing
/// secret, shown once.
#[server]
pub async fn add_webhook(agent_id: String, url: String, events: String) -> Result<NewEndpoint, ConsoleError> {
    use parley_engine::engine::webhooks::WebhookSetupError;
    use parley_engine::store::agents;
    let AdminUser { state, user } = AdminUser::extract().await?;
    let agent = agents::by_id(state.engine.db(), &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let events: Vec<String> = events.split(',').map(|e| e.trim().to_owned()).filter(|e| !e.is_empty()).collect();
    let (endpoint, secret) = state.engine.add_webhook(&agent.id, &url, &events).await.map_err(|e| match e {
        WebhookSetupError::Url(e) => ConsoleError::invalid("url", e.to_string()),
        WebhookSetupError::NoEvents | WebhookSetupError::UnknownEvent(_) => {
            ConsoleError::invalid("events", e.to_string())
        }
        WebhookSetupError::TooMany => ConsoleError::Conflict(e.to_string()),
        WebhookSetupError::Db(e) => e.into(),
    })?;
    let detail = format!("{} ({})", endpoint.url, endpoint.events().join(", "));
    state.engine.audit(Some(&user), "webhook.add", Some(&agent.public_key), &detail).await;
    Ok(NewEndpoint { url: endpoint.url, secret })
}

/// Turns an endpoint on (what waits for it goes out) or off.
#[server]
pub async fn set_webhook_enabled(endpoint_id: String, #[server(default)] enabled: bool) -> Result<(), ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    if !state.engine.set_webhook_enabled(&endpoint_id, enabled).await? {
        return Err(ConsoleError::NotFound);
    }
    let action = if enabled { "webhook.enable" } else { "webhook.disable" };
    state.engine.audit(Some(&user), action, Some(&endpoint_id), "").await;
    Ok(())
}

/// Deletes an endpoint and its log.
#[server]
pub async fn delete_webhook(endpoint_id: String) -> Result<(), ConsoleError> {
    use parley_engine::store::webhooks;
    let AdminUser { state, user } = AdminUser::extract().await?;
    let db = state.engine.db();
    let endpoint = webhooks::by_id(db, &endpoint_id).await?.ok_or(ConsoleError::NotFound)?;
    webhooks::delete(db, &endpoint.id).await?;
    state.engine.audit(Some(&user), "webhook.delete", Some(&endpoint.id), &endpoint.url).await;
    Ok(())
}

/// Queues a delivery again, now ("send again").
#[server]
pub async fn resend_webhook(delivery_id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, user } = AdminUser::extract().await?;
    let endpoint = state.engine.resend_webhook(&delivery_id).await?.ok_or(ConsoleError::NotFound)?;
    state.engine.audit(Some(&user), "webhook.resend", Some(&endpoint), &delivery_id).await;
    Ok(())
}
