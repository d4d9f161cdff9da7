//! Standard Webhooks (<https://www.standardwebhooks.com/>): a call carries `webhook-id`,
//! `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of
//! "{id}.{timestamp}.{body}">` (several, space-separated, while a secret is rotated). The secret
//! is written `whsec_<base64>`. A call is accepted only within [`TOLERANCE_S`] of the server's
//! time; the caller refuses ids it has already seen.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::WebhookError;

/// How far a call's timestamp may be from the server's time, either way, in seconds.
pub const TOLERANCE_S: i64 = 5 * 60;

/// The longest `webhook-id` accepted.
pub const MAX_ID_LEN: usize = 256;

/// A webhook signing secret (24 to 64 random bytes, as Standard Webhooks asks).
#[derive(Clone)]
pub struct WebhookSecret(Vec<u8>);

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(••••)")
    }
}

impl WebhookSecret {
    /// Reads `whsec_<base64>`; says what is wrong with anything else.
    pub fn parse(text: &str) -> Result<Self, String> {
        let b64 = text
            .trim()
            .strip_prefix("whsec_")
            .ok_or("the payment webhook secret must look like `whsec_<base64>` (Standard Webhooks)")?;
        let bytes = STANDARD
            .decode(b64)
            .map_err(|e| format!("the payment webhook secret after `whsec_` is not valid base64: {e}"))?;
        if !(24..=64).contains(&bytes.len()) {
            return Err(format!(
                "the payment webhook secret must hold 24 to 64 bytes (it holds {}); make one with \
                 `echo whsec_$(head -c 32 /dev/urandom | base64)`",
                bytes.len()
            ));
        }
        Ok(WebhookSecret(bytes))
    }

    /// The secret as configured (`whsec_…`).
    pub fn to_text(&self) -> String {
        format!("whsec_{}", STANDARD.encode(&self.0))
    }

    /// A random secret of 32 bytes (an outbound endpoint's, tests).
    pub fn random() -> Self {
        WebhookSecret(rand::random::<[u8; 32]>().to_vec())
    }

    fn mac(&self, id: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any size");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        mac
    }

    /// The `webhook-signature` header of a call (what a provider sends).
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        format!("v1,{}", STANDARD.encode(self.mac(id, timestamp, body).finalize().into_bytes()))
    }

    /// Checks a call's headers against its body at `now_s` (Unix seconds); returns its id.
    pub fn verify<'h>(&self, headers: &'h http::HeaderMap, body: &[u8], now_s: i64) -> Result<&'h str, WebhookError> {
        let header = |name: &'static str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .ok_or(WebhookError::MissingHeader(name))
        };
        let id = header("webhook-id")?;
        if id.len() > MAX_ID_LEN || !id.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(WebhookError::MissingHeader("webhook-id"));
        }
        let timestamp: i64 =
            header("webhook-timestamp")?.parse().map_err(|_| WebhookError::MissingHeader("webhook-timestamp"))?;
        let signatures = header("webhook-signature")?;
        // The signature first, so that a caller without the secret learns nothing about the clock.
        let expected = self.mac(id, timestamp, body);
        let mut any_v1 = false;
        for candidate in signatures.split_whitespace() {
            let Some(b64) = candidate.strip_prefix("v1,") else { continue };
            any_v1 = true;
            let Ok(sig) = STANDARD.decode(b64) else { continue };
            if expected.clone().verify_slice(&sig).is_ok() {
                if (now_s - timestamp).abs() > TOLERANCE_S {
                    return Err(WebhookError::StaleTimestamp);
                }
                return Ok(id);
            }
        }
        Err(if any_v1 { WebhookError::BadSignature } else { WebhookError::MissingHeader("webhook-signature") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(id: &str, ts: i64, sig: &str) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        h.insert("webhook-id", id.parse().unwrap());
        h.insert("webhook-timestamp", ts.to_string().parse().unwrap());
        h.insert("webhook-signature", sig.parse().unwrap());
        h
    }

    #[test]
    fn secrets_are_whsec_base64_of_24_to_64_bytes() {
        let s = WebhookSecret::random();
        assert_eq!(WebhookSecret::parse(&s.to_text()).unwrap().0, s.0);
        assert!(WebhookSecret::parse("test-webhook-secret").unwrap_err().contains("whsec_"));
        assert!(WebhookSecret::parse("whsec_!!!").unwrap_err().contains("base64"));
        let short = format!("whsec_{}", STANDARD.encode([7u8; 16]));
        assert!(WebhookSecret::parse(&short).unwrap_err().contains("24 to 64"));
        assert!(!format!("{s:?}").contains(&STANDARD.encode(&s.0)), "never printed");
    }

    /// The example of the Standard Webhooks specification's reference libraries.
    #[test]
    fn matches_the_reference_implementation() {
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        let sig = secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_good_call_verifies_and_a_changed_one_does_not() {
        let secret = WebhookSecret::random();
        let body = br#"{"order_id":"ORD_1","status":"paid","amount_minor":9900,"currency":"CNY"}"#;
        let now = 1_700_000_000;
        let sig = secret.sign("msg_1", now, body);
        assert_eq!(secret.verify(&headers("msg_1", now, &sig), body, now), Ok("msg_1"));
        // Within the window either way.
        assert!(secret.verify(&headers("msg_1", now, &sig), body, now + TOLERANCE_S).is_ok());
        assert!(secret.verify(&headers("msg_1", now, &sig), body, now - TOLERANCE_S).is_ok());
        // Another body, id or timestamp, or another secret.
        let other_body = br#"{"order_id":"ORD_1","status":"paid","amount_minor":1,"currency":"CNY"}"#;
        assert_eq!(secret.verify(&headers("msg_1", now, &sig), other_body, now), Err(WebhookError::BadSignature));
        assert_eq!(secret.verify(&headers("msg_2", now, &sig), body, now), Err(WebhookError::BadSignature));
        assert_eq!(secret.verify(&headers("msg_1", now + 1, &sig), body, now), Err(WebhookError::BadSignature));
        let forged = WebhookSecret::random().sign("msg_1", now, body);
        assert_eq!(secret.verify(&headers("msg_1", now, &forged), body, now), Err(WebhookError::BadSignature));
    }

    #[test]
    fn old_or_future_calls_are_refused() {
        let secret = WebhookSecret::random();
        let body = b"{}";
        let then = 1_700_000_000;
        let sig = secret.sign("msg_1", then, body);
        let h = headers("msg_1", then, &sig);
        assert_eq!(secret.verify(&h, body, then + TOLERANCE_S + 1), Err(WebhookError::StaleTimestamp));
        assert_eq!(secret.verify(&h, body, then - TOLERANCE_S - 1), Err(WebhookError::StaleTimestamp));
    }

    #[test]
    fn rotated_secrets_and_missing_headers() {
        let secret = WebhookSecret::random();
        let body = b"{}";
        let now = 1_700_000_000;
        let both = format!("v1,AAAA {} v2,xyz", secret.sign("m", now, body));
        assert!(secret.verify(&headers("m", now, &both), body, now).is_ok());
        let mut h = headers("m", now, "v1,AAAA");
        assert_eq!(secret.verify(&h, body, now), Err(WebhookError::BadSignature));
        h.insert("webhook-signature", "sha256=00".parse().unwrap());
        assert_eq!(secret.verify(&h, body, now), Err(WebhookError::MissingHeader("webhook-signature")));
        h.remove("webhook-id");
        assert_eq!(secret.verify(&h, body, now), Err(WebhookError::MissingHeader("webhook-id")));
        let h = headers("m", now, &secret.sign("m", now, body));
        let mut no_ts = h.clone();
        no_ts.insert("webhook-timestamp", "soon".parse().unwrap());
        assert_eq!(secret.verify(&no_ts, body, now), Err(WebhookError::MissingHeader("webhook-timestamp")));
    }
}
