//! Payments for the paid assessment: order creation (idempotent, the amount never from the model
//! but the price the agent's owner set for the service, `store::agents::Domain`), and payment providers behind [`PaymentProvider`]. The shipped
//! provider is a sandbox, on only where the operator asks for it, whose page lets a tester mark an
//! order paid; providers call the webhook, signed the Standard Webhooks way ([`webhooks`]). The
//! pay page opens through signed, expiring links ([`links`]).

pub mod links;
pub mod sandbox;
mod status;
pub mod webhooks;

use std::sync::Arc;

pub use links::{LinkError, PayLinks};
pub use status::WebhookFailure;
pub use webhooks::WebhookSecret;

/// How long an order can be paid, in milliseconds.
pub const ORDER_TTL_MS: i64 = 30 * 60 * 1000;

/// A provider's word on an order, read from a webhook call that verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookEvent {
    /// The call's id (`webhook-id`): each is accepted once.
    pub id: String,
    pub order_id: String,
    /// Only `paid` changes anything.
    pub status: String,
    /// Must equal the order's amount and currency.
    pub amount_minor: i64,
    pub currency: String,
}

/// The body of a payment webhook call (Standard Webhooks signs it as sent).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct WebhookBody {
    pub order_id: String,
    pub status: String,
    pub amount_minor: i64,
    pub currency: String,
}

/// Why a webhook call did not verify.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    #[error("missing or malformed `{0}` header")]
    MissingHeader(&'static str),
    #[error("signature does not match")]
    BadSignature,
    #[error("timestamp outside the {} s window", webhooks::TOLERANCE_S)]
    StaleTimestamp,
    #[error("body is not a payment event: {0}")]
    BadBody(String),
    #[error("this provider takes no webhooks (no secret configured)")]
    NotConfigured,
}

/// Why a payment could not be started at the provider.
#[derive(Debug, thiserror::Error)]
#[error("the payment provider failed: {0}")]
pub struct CheckoutError(pub String);

/// What a provider is asked to take payment for.
#[derive(Clone, Debug)]
pub struct CheckoutRequest<'a> {
    pub order_id: &'a str,
    pub amount_minor: i64,
    pub currency: &'a str,
    /// `ALIPAY`, `WECHAT`, `CREDIT_CARD`.
    pub method: &'a str,
    /// What is bought, for the provider's page.
    pub description: &'a str,
    /// When the order can no longer be paid (Unix ms).
    pub expires_at: i64,
    /// Parley's own page for the order (a signed, expiring link): where a provider with a hosted
    /// page of its own sends the visitor back.
    pub order_page: &'a str,
}

/// A payment provider: a hosted page where the visitor pays, and signed webhooks that say an
/// order was paid. A real provider (Stripe-like) implements the same two calls: `checkout`
/// creates its session and returns its page; `verify_webhook` checks its signature scheme and
/// reads its event. Replays and the order's amount are checked by the engine, for every provider.
#[async_trait::async_trait]
pub trait PaymentProvider: Send + Sync + std::fmt::Debug {
    /// Stored on the order (`sandbox`, …).
    fn name(&self) -> &'static str;
    /// Starts paying for an order; returns where the visitor pays (what the QR code encodes).
    async fn checkout(&self, order: &CheckoutRequest<'_>) -> Result<String, CheckoutError>;
    /// Checks a webhook call (its headers and raw body) at `now_ms` and reads its event.
    fn verify_webhook(&self, headers: &http::HeaderMap, body: &[u8], now_ms: i64)
    -> Result<WebhookEvent, WebhookError>;
}

/// Payments as this server runs them.
#[derive(Clone, Debug)]
pub struct Payments {
    /// None: payments are off (`generate_payment` says so).
    pub provider: Option<Arc<dyn PaymentProvider>>,
    /// Signs and checks the links to Parley's pay page.
    pub links: PayLinks,
    /// The sandbox's "Mark as paid" button is on (only with the sandbox provider).
    pub sandbox: bool,
    /// The webhook route is mounted (a provider and a webhook secret).
    pub webhooks: bool,
}

impl Payments {
    /// No provider: payments off.
    pub fn off(links: PayLinks) -> Self {
        Payments { provider: None, links, sandbox: false, webhooks: false }
    }

    /// The sandbox provider; webhooks only with a secret.
    pub fn sandbox(links: PayLinks, webhook_secret: Option<WebhookSecret>) -> Self {
        let webhooks = webhook_secret.is_some();
        Payments { provider: Some(Arc::new(sandbox::Sandbox::new(webhook_secret))), links, sandbox: true, webhooks }
    }
}

/// A new order id: `ORD_` and 128 random bits (from the operating system's generator, through
/// `rand`'s thread generator), in hex.
pub fn new_order_id() -> String {
    format!("ORD_{}", hex::encode(rand::random::<[u8; 16]>()))
}

/// The SVG QR code of `data`.
pub fn qr_svg(data: &str) -> Result<String, qrcode::types::QrError> {
    let code = qrcode::QrCode::new(data.as_bytes())?;
    Ok(code.render::<qrcode::render::svg::Color>().min_dimensions(200, 200).quiet_zone(true).build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_ids_carry_128_random_bits() {
        let a = new_order_id();
        let b = new_order_id();
        assert_ne!(a, b);
        let hex_part = a.strip_prefix("ORD_").unwrap();
        assert_eq!(hex_part.len(), 32);
        assert!(hex_part.bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn qr_is_svg() {
        let svg = qr_svg("http://127.0.0.1:3000/pay/ORD_1").unwrap();
        assert!(svg.contains("<svg") && svg.contains("</svg>"));
    }
}
