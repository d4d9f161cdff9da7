//! Payments for the paid assessment: the server's price table, order creation (idempotent, the
//! amount never from the model), and payment providers behind [`PaymentProvider`]. The shipped
//! provider is a sandbox whose hosted page lets a tester mark an order paid; real providers call
//! the HMAC-verified webhook.

pub mod sandbox;
mod status;

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What one assessment costs, in CNY fen, by immigration category.
pub const PRICES: &[(&str, i64)] =
    &[("QMAS", 9900), ("GEP", 9900), ("IANG", 7900), ("TTPS", 9900), ("CIES", 19900), ("TECHTAS", 9900)];

/// The categories the price table knows.
pub const CATEGORIES: &[&str] = &["QMAS", "GEP", "IANG", "TTPS", "CIES", "TECHTAS"];

/// How long an order can be paid, in milliseconds.
pub const ORDER_TTL_MS: i64 = 30 * 60 * 1000;

/// The price of an assessment for a category, in fen.
pub fn price_minor(category: &str) -> Option<i64> {
    PRICES.iter().find(|(c, _)| *c == category).map(|(_, p)| *p)
}

/// A payment confirmed by a provider.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct WebhookEvent {
    pub order_id: String,
    /// Only `paid` changes anything.
    pub status: String,
}

/// Why a webhook was refused.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum WebhookError {
    #[error("missing or malformed signature")]
    MissingSignature,
    #[error("signature does not match")]
    BadSignature,
    #[error("body is not a payment event: {0}")]
    BadBody(String),
}

/// A payment provider.
pub trait PaymentProvider: Send + Sync + std::fmt::Debug {
    /// Stored on the order (`sandbox`, …).
    fn name(&self) -> &'static str;
    /// Where the visitor pays (what the QR code encodes).
    fn pay_url(&self, order_id: &str) -> String;
    /// Checks a webhook call and reads its event.
    fn verify_webhook(&self, signature: Option<&str>, body: &[u8]) -> Result<WebhookEvent, WebhookError>;
}

/// `sha256=<hex>` of the body under `secret`.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any size");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Verifies a `sha256=<hex>` signature in constant time.
pub fn verify_signature(secret: &[u8], signature: Option<&str>, body: &[u8]) -> Result<(), WebhookError> {
    let hex_sig = signature.and_then(|s| s.trim().strip_prefix("sha256=")).ok_or(WebhookError::MissingSignature)?;
    let expected = hex::decode(hex_sig).map_err(|_| WebhookError::MissingSignature)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any size");
    mac.update(body);
    mac.verify_slice(&expected).map_err(|_| WebhookError::BadSignature)
}

/// An order id like the seed's `ORD_1706012345678`, with random digits so two in the same
/// millisecond differ.
pub fn new_order_id(now_ms: i64) -> String {
    format!("ORD_{now_ms}{:04}", rand::random::<u16>() % 10_000)
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
    fn prices_come_from_the_table() {
        assert_eq!(price_minor("QMAS"), Some(9900));
        assert_eq!(price_minor("IANG"), Some(7900));
        assert_eq!(price_minor("CIES"), Some(19900));
        assert_eq!(price_minor("XYZ"), None);
    }

    #[test]
    fn signatures_verify_and_reject() {
        let body = br#"{"order_id":"ORD_1","status":"paid"}"#;
        let sig = sign(b"secret", body);
        assert!(verify_signature(b"secret", Some(&sig), body).is_ok());
        assert_eq!(verify_signature(b"other", Some(&sig), body), Err(WebhookError::BadSignature));
        assert_eq!(verify_signature(b"secret", Some(&sig), b"{}"), Err(WebhookError::BadSignature));
        assert_eq!(verify_signature(b"secret", None, body), Err(WebhookError::MissingSignature));
        assert_eq!(verify_signature(b"secret", Some("md5=00"), body), Err(WebhookError::MissingSignature));
    }

    #[test]
    fn qr_is_svg() {
        let svg = qr_svg("http://127.0.0.1:3000/pay/ORD_1").unwrap();
        assert!(svg.contains("<svg") && svg.contains("</svg>"));
    }
}
