//! The HMAC signatures `jsonwebtoken` computes for host-site identity tokens, from RustCrypto's
//! `hmac` and `sha2` (already in the tree). `jsonwebtoken` 10 takes its cryptography from a
//! provider; its `rust_crypto` feature would bring RSA, P-256, P-384 and Ed25519 with it — four
//! crates of big-number and curve code compiled in every build for tokens that are HS256 only.
//! Validation (algorithm, audience, claims, base64, JSON) stays the crate's.

use hmac::{Hmac, Mac};
use jsonwebtoken::crypto::{CryptoProvider, JwkUtils, JwtSigner, JwtVerifier};
use jsonwebtoken::errors::{ErrorKind, Result};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use sha2::{Sha256, Sha384, Sha512};
use signature::{Signer, Verifier};

/// One HMAC key and the algorithm it signs for (HS256, HS384 or HS512).
enum Key {
    Hs256(Hmac<Sha256>),
    Hs384(Hmac<Sha384>),
    Hs512(Hmac<Sha512>),
}

struct HmacKey(Key);

impl HmacKey {
    fn new(algorithm: Algorithm, secret: &[u8]) -> Result<HmacKey> {
        let bad = |_| jsonwebtoken::errors::Error::from(ErrorKind::InvalidKeyFormat);
        Ok(HmacKey(match algorithm {
            Algorithm::HS256 => Key::Hs256(Hmac::new_from_slice(secret).map_err(bad)?),
            Algorithm::HS384 => Key::Hs384(Hmac::new_from_slice(secret).map_err(bad)?),
            Algorithm::HS512 => Key::Hs512(Hmac::new_from_slice(secret).map_err(bad)?),
            _ => return Err(ErrorKind::InvalidAlgorithm.into()),
        }))
    }

    fn tag(&self, message: &[u8]) -> Vec<u8> {
        match &self.0 {
            Key::Hs256(mac) => mac.clone().chain_update(message).finalize().into_bytes().to_vec(),
            Key::Hs384(mac) => mac.clone().chain_update(message).finalize().into_bytes().to_vec(),
            Key::Hs512(mac) => mac.clone().chain_update(message).finalize().into_bytes().to_vec(),
        }
    }

    fn check(&self, message: &[u8], tag: &[u8]) -> bool {
        // `verify_slice` compares in constant time.
        match &self.0 {
            Key::Hs256(mac) => mac.clone().chain_update(message).verify_slice(tag).is_ok(),
            Key::Hs384(mac) => mac.clone().chain_update(message).verify_slice(tag).is_ok(),
            Key::Hs512(mac) => mac.clone().chain_update(message).verify_slice(tag).is_ok(),
        }
    }

    fn algorithm(&self) -> Algorithm {
        match self.0 {
            Key::Hs256(_) => Algorithm::HS256,
            Key::Hs384(_) => Algorithm::HS384,
            Key::Hs512(_) => Algorithm::HS512,
        }
    }
}

impl Signer<Vec<u8>> for HmacKey {
    fn try_sign(&self, message: &[u8]) -> std::result::Result<Vec<u8>, signature::Error> {
        Ok(self.tag(message))
    }
}

impl JwtSigner for HmacKey {
    fn algorithm(&self) -> Algorithm {
        HmacKey::algorithm(self)
    }
}

impl Verifier<Vec<u8>> for HmacKey {
    fn verify(&self, message: &[u8], tag: &Vec<u8>) -> std::result::Result<(), signature::Error> {
        if self.check(message, tag) { Ok(()) } else { Err(signature::Error::new()) }
    }
}

impl JwtVerifier for HmacKey {
    fn algorithm(&self) -> Algorithm {
        HmacKey::algorithm(self)
    }
}

static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: |algorithm, key: &EncodingKey| {
        Ok(Box::new(HmacKey::new(*algorithm, key.try_get_hmac_secret()?)?) as Box<dyn JwtSigner>)
    },
    verifier_factory: |algorithm, key: &DecodingKey| {
        Ok(Box::new(HmacKey::new(*algorithm, key.try_get_hmac_secret()?)?) as Box<dyn JwtVerifier>)
    },
    jwk_utils: JwkUtils::new_unimplemented(),
};

/// Makes these signatures `jsonwebtoken`'s for the process. Idempotent; called before every
/// use (and by tests that sign tokens as a host site's backend would).
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only if a provider is already installed, which is then this one.
        let _ = PROVIDER.install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{Header, Validation, decode, encode};
    use serde_json::{Value, json};

    /// RFC 7515 appendix A.1's HS256 example: the same signature from the same key and input.
    #[test]
    fn the_rfc_example_signs_the_same() {
        install();
        let signature = jsonwebtoken::crypto::sign(
            b"eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ",
            &EncodingKey::from_secret(
                &base64::Engine::decode(
                    &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                    "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow",
                )
                .unwrap(),
            ),
            Algorithm::HS256,
        );
        assert_eq!(signature.unwrap(), "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
    }

    #[test]
    fn tokens_round_trip_and_a_wrong_key_or_algorithm_fails() {
        install();
        let claims = json!({"sub": "u", "exp": 4_000_000_000u64});
        for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
            let token = encode(&Header::new(alg), &claims, &EncodingKey::from_secret(b"k1")).unwrap();
            let ok = decode::<Value>(&token, &DecodingKey::from_secret(b"k1"), &Validation::new(alg));
            assert_eq!(ok.unwrap().claims, claims);
            let bad = decode::<Value>(&token, &DecodingKey::from_secret(b"k2"), &Validation::new(alg));
            assert_eq!(bad.unwrap_err().kind(), &ErrorKind::InvalidSignature);
        }
        let rsa = HmacKey::new(Algorithm::RS256, b"k1");
        assert!(matches!(rsa.err().unwrap().kind(), ErrorKind::InvalidAlgorithm));
    }
}
