//! Secrets that must never reach a log line: API keys of model providers and other services.
//!
//! Every struct that holds a key holds it as an [`ApiKey`], whose `Debug` and `Display` print only
//! a hint (`••••1234`), so a derived `Debug` of an agent, a client or a configuration cannot print
//! the key. The key itself is read with [`ApiKey::expose`], at the one place that sends it.

/// A secret key. Empty keys do not exist: [`ApiKey::new`] gives `None` for them.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key, trimmed; `None` when nothing is left.
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key = key.into();
        let trimmed = key.trim();
        if trimmed.is_empty() {
            None
        } else if trimmed.len() == key.len() {
            Some(ApiKey(key))
        } else {
            Some(ApiKey(trimmed.to_owned()))
        }
    }

    /// The key itself, for the request that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `••••` and the last four characters (only `••••` for keys of eight characters or fewer,
    /// which would give too much away).
    pub fn hint(&self) -> String {
        let n = self.0.chars().count();
        if n <= 8 {
            return "••••".to_owned();
        }
        let tail: String = self.0.chars().skip(n - 4).collect();
        format!("••••{tail}")
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hint())
    }
}

impl std::fmt::Display for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hint())
    }
}

/// The key that encrypts provider keys at rest (AES-256-GCM). It comes from `PARLEY_SECRET_KEY`
/// (32 bytes, base64 or hex) or from the file `secret.key` in the data directory, created with
/// mode 0600 on the first start. Its `Debug` prints nothing of the key.
#[derive(Clone)]
pub struct SecretBox {
    cipher: aes_gcm::Aes256Gcm,
}

/// The prefix of a sealed value: the format's version, then base64 of the nonce and ciphertext.
const SEALED_V1: &str = "enc:v1:";

/// Why a secret key could not be read, or a sealed value not opened.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum SecretError {
    #[error("the secret key must be 32 bytes written as base64 (44 characters) or hex (64 characters)")]
    BadKey,
    #[error("a stored secret could not be decrypted: it was sealed with another secret key, or damaged")]
    WrongKey,
    #[error("a stored secret is in an unknown format")]
    Unknown,
}

impl SecretBox {
    pub fn from_bytes(key: [u8; 32]) -> SecretBox {
        use aes_gcm::KeyInit;
        SecretBox { cipher: aes_gcm::Aes256Gcm::new(&key.into()) }
    }

    /// A key written as 64 hex digits or as base64 (standard or URL-safe, padded or not) of 32
    /// bytes; anything else is refused.
    pub fn parse(text: &str) -> Result<SecretBox, SecretError> {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
        let text = text.trim();
        let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(text).map_err(|_| SecretError::BadKey)?
        } else {
            [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
                .iter()
                .find_map(|engine| engine.decode(text).ok())
                .ok_or(SecretError::BadKey)?
        };
        let key: [u8; 32] = bytes.try_into().map_err(|_| SecretError::BadKey)?;
        Ok(SecretBox::from_bytes(key))
    }

    /// A new random key, and its text (base64) for the key file.
    pub fn generate() -> (SecretBox, String) {
        use base64::Engine as _;
        let key: [u8; 32] = rand::random();
        (SecretBox::from_bytes(key), base64::engine::general_purpose::STANDARD.encode(key))
    }

    /// Whether a stored value is sealed (as opposed to plain text from before encryption).
    pub fn is_sealed(stored: &str) -> bool {
        stored.starts_with("enc:")
    }

    /// `enc:v1:` + base64 of a random 96-bit nonce followed by the ciphertext and its tag.
    pub fn seal(&self, plain: &str) -> String {
        use aes_gcm::aead::Aead;
        use base64::Engine as _;
        let nonce: [u8; 12] = rand::random();
        // Encryption fails only for inputs of gigabytes.
        let sealed = self.cipher.encrypt(&nonce.into(), plain.as_bytes()).unwrap_or_default();
        let mut out = Vec::with_capacity(12 + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        format!("{SEALED_V1}{}", base64::engine::general_purpose::STANDARD.encode(out))
    }

    /// The plain text of a sealed value; [`SecretError::WrongKey`] when it does not decrypt
    /// (another key, or altered).
    pub fn open(&self, stored: &str) -> Result<String, SecretError> {
        use aes_gcm::aead::Aead;
        use base64::Engine as _;
        let body = stored.strip_prefix(SEALED_V1).ok_or(SecretError::Unknown)?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(body).map_err(|_| SecretError::Unknown)?;
        if bytes.len() < 12 + 16 {
            return Err(SecretError::Unknown);
        }
        let (nonce, sealed) = bytes.split_at(12);
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| SecretError::Unknown)?;
        let plain = self.cipher.decrypt(&nonce.into(), sealed).map_err(|_| SecretError::WrongKey)?;
        String::from_utf8(plain).map_err(|_| SecretError::WrongKey)
    }
}

impl std::fmt::Debug for SecretBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretBox(••••)")
    }
}

#[cfg(test)]
mod tests {
    use super::ApiKey;

    #[test]
    fn debug_and_display_show_only_a_hint() {
        let key = ApiKey::new("sk-test-secret-1234").unwrap();
        assert_eq!(format!("{key:?}"), "••••1234");
        assert_eq!(key.to_string(), "••••1234");
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Holder {
            key: Option<ApiKey>,
        }
        let printed = format!("{:?}", Holder { key: Some(key.clone()) });
        assert!(!printed.contains("secret"), "{printed}");
        assert_eq!(key.expose(), "sk-test-secret-1234");
    }

    #[test]
    fn short_and_empty_keys() {
        assert_eq!(ApiKey::new("  "), None);
        assert_eq!(ApiKey::new("abcd").unwrap().hint(), "••••");
        assert_eq!(ApiKey::new("short").unwrap().hint(), "••••");
        assert_eq!(ApiKey::new("sk-abcdefghijklmnop1234").unwrap().hint(), "••••1234");
        assert_eq!(ApiKey::new(" padded-key-5678 ").unwrap().expose(), "padded-key-5678");
    }

    #[test]
    fn sealed_values_open_with_their_key_only() {
        use super::{SecretBox, SecretError};
        let (key, text) = SecretBox::generate();
        let sealed = key.seal("sk-live-1234567890");
        assert!(sealed.starts_with("enc:v1:") && !sealed.contains("sk-live"), "{sealed}");
        assert_ne!(key.seal("sk-live-1234567890"), sealed, "a fresh nonce each time");
        assert_eq!(key.open(&sealed).unwrap(), "sk-live-1234567890");
        assert_eq!(SecretBox::parse(&text).unwrap().open(&sealed).unwrap(), "sk-live-1234567890");
        let other = SecretBox::from_bytes([7; 32]);
        assert_eq!(other.open(&sealed), Err(SecretError::WrongKey));
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push(if sealed.ends_with('A') { 'B' } else { 'A' });
        assert!(key.open(&tampered).is_err());
        assert_eq!(key.open("sk-plain"), Err(SecretError::Unknown));
    }

    #[test]
    fn keys_are_32_bytes_of_hex_or_base64() {
        use super::{SecretBox, SecretError};
        let hex_key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let a = SecretBox::parse(hex_key).unwrap();
        let b64 = "ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd7v8=";
        assert_eq!(SecretBox::parse(b64).unwrap().open(&a.seal("x")).unwrap(), "x");
        assert_eq!(SecretBox::parse("short").err(), Some(SecretError::BadKey));
        assert_eq!(SecretBox::parse(&hex_key[..62]).err(), Some(SecretError::BadKey));
        assert_eq!(SecretBox::parse("").err(), Some(SecretError::BadKey));
    }
}
