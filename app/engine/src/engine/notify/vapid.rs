//! The server's VAPID identity (RFC 8292): a P-256 key pair, made once and stored with its
//! private half sealed by the secret key (or given by the configuration), and the `Authorization:
//! vapid t=…, k=…` header it signs for each push service.
//!
//! The JWT is signed here with `p256`'s ECDSA (ES256: the signature is `r || s`, 64 bytes). The
//! crate that builds the push requests (`web-push-native`) signs with `jwt-simple` behind its
//! `vapid` feature, which brings P-384, secp256k1, Ed25519 and RSA code for one ES256 token; and
//! `jsonwebtoken` here has our own HMAC-only provider (`engine::jwt_crypto`).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::elliptic_curve::sec1::ToEncodedPoint;

use super::unbase64;
use crate::secret::Place;
use crate::store::{Db, DbError, push as store};

/// Where the sealed private key is stored.
pub const PLACE: Place<'static> = Place { table: "vapid_keys", column: "private_key", row: "main" };

/// A VAPID key pair.
#[derive(Clone)]
pub struct Vapid {
    signing: p256::ecdsa::SigningKey,
    /// The public key, uncompressed, base64url (the `k=` of the header, the browser's
    /// `applicationServerKey`).
    pub public: String,
}

impl std::fmt::Debug for Vapid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vapid").field("public", &self.public).finish_non_exhaustive()
    }
}

/// Why there is no VAPID key.
#[derive(Debug, thiserror::Error)]
pub enum VapidError {
    #[error("the VAPID private key must be a P-256 private key: 32 bytes, base64url")]
    BadKey,
    #[error("the stored VAPID key does not open with the secret key")]
    Sealed,
    #[error("no secret key to seal the VAPID key with")]
    NoSecretKey,
    #[error(transparent)]
    Db(#[from] DbError),
}

impl Vapid {
    /// The pair of a private key (32 bytes, base64url).
    pub fn from_private(text: &str) -> Result<Vapid, VapidError> {
        let bytes = unbase64(text).filter(|b| b.len() == 32).ok_or(VapidError::BadKey)?;
        let secret = p256::SecretKey::from_slice(&bytes).map_err(|_| VapidError::BadKey)?;
        Ok(Vapid::from_secret(&secret))
    }

    fn from_secret(secret: &p256::SecretKey) -> Vapid {
        let public = URL_SAFE_NO_PAD.encode(secret.public_key().to_encoded_point(false).as_bytes());
        Vapid { signing: p256::ecdsa::SigningKey::from(secret), public }
    }

    /// A new random pair and its private key, base64url.
    pub fn generate() -> (Vapid, String) {
        loop {
            let bytes: [u8; 32] = rand::random();
            // (Zero or past the group order: next draw; it practically never happens.)
            if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
                return (Vapid::from_secret(&secret), URL_SAFE_NO_PAD.encode(bytes));
            }
        }
    }

    /// The stored pair, made and stored first if there is none (sealed with the database's secret
    /// key; a replica starting at the same moment keeps the first one stored).
    pub async fn load_or_create(db: &Db, now: i64) -> Result<Vapid, VapidError> {
        let secrets = db.secrets().ok_or(VapidError::NoSecretKey)?;
        if store::vapid_keys(db).await?.is_none() {
            let (_, private) = Vapid::generate();
            let pair = Vapid::from_private(&private)?;
            store::store_vapid_keys(db, &pair.public, &secrets.seal(&private, PLACE), now).await?;
        }
        let (_, sealed) = store::vapid_keys(db).await?.ok_or(VapidError::Sealed)?;
        let private = secrets.open(&sealed, PLACE).map_err(|_| VapidError::Sealed)?;
        Vapid::from_private(&private)
    }

    /// The `Authorization` header for a push to `endpoint`: a JWT (ES256) for the endpoint's
    /// origin, expiring at `exp` (Unix seconds; at most 24 h ahead, RFC 8292), from `subject`.
    pub fn authorization(&self, endpoint: &url::Url, subject: &str, exp: i64) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({
            "aud": endpoint.origin().ascii_serialization(),
            "exp": exp,
            "sub": subject,
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signed = format!("{header}.{claims}");
        let signature: p256::ecdsa::Signature = self.signing.sign(signed.as_bytes());
        let token = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()));
        format!("vapid t={token}, k={}", self.public)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;

    #[test]
    fn the_header_carries_a_jwt_that_the_public_key_verifies() {
        let (pair, private) = Vapid::generate();
        assert_eq!(Vapid::from_private(&private).unwrap().public, pair.public);
        let url = url::Url::parse("https://push.example.com:8443/send/abc?x=1").unwrap();
        let header = pair.authorization(&url, "mailto:ops@example.com", 1_000);
        let (t, k) = header.strip_prefix("vapid t=").unwrap().split_once(", k=").unwrap();
        assert_eq!(k, pair.public);
        let parts: Vec<&str> = t.split('.').collect();
        let claims: serde_json::Value = serde_json::from_slice(&unbase64(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://push.example.com:8443");
        assert_eq!((claims["exp"].as_i64(), claims["sub"].as_str()), (Some(1_000), Some("mailto:ops@example.com")));
        let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&unbase64(k).unwrap()).unwrap();
        let signature = p256::ecdsa::Signature::from_slice(&unbase64(parts[2]).unwrap()).unwrap();
        let signed = format!("{}.{}", parts[0], parts[1]);
        assert!(key.verify(signed.as_bytes(), &signature).is_ok());
        assert!(key.verify(b"something else", &signature).is_err());
        assert!(matches!(Vapid::from_private("c2hvcnQ"), Err(VapidError::BadKey)));
    }
}
