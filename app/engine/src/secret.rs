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

/// The prefix of a value sealed before associated data (still opened, without it).
const SEALED_V1: &str = "enc:v1:";

/// The prefix of a value sealed to its place: the format's version, then base64 of the nonce and
/// ciphertext; the place (table, column, row) is the associated data.
const SEALED_V2: &str = "enc:v2:";

/// Where a sealed value is stored: its table, column and row. Sealed into the value as associated
/// data, so a value copied to another row or column does not open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place<'a> {
    pub table: &'static str,
    pub column: &'static str,
    /// The row's id.
    pub row: &'a str,
}

impl<'a> Place<'a> {
    pub fn new(table: &'static str, column: &'static str, row: &'a str) -> Self {
        Place { table, column, row }
    }

    /// `parley\0table\0column\0row`: the names are fixed identifiers without NUL, the row is last.
    fn associated_data(&self) -> Vec<u8> {
        format!("parley\0{}\0{}\0{}", self.table, self.column, self.row).into_bytes()
    }
}

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

    /// Whether a sealed value is in the current format (bound to its place); an older one opens
    /// and is sealed again at the next start or write.
    pub fn is_current(stored: &str) -> bool {
        stored.starts_with(SEALED_V2)
    }

    /// `enc:v2:` + base64 of a random 96-bit nonce followed by the ciphertext and its tag; the
    /// value's place is the associated data.
    pub fn seal(&self, plain: &str, place: Place<'_>) -> String {
        use aes_gcm::aead::{Aead, Payload};
        use base64::Engine as _;
        let nonce: [u8; 12] = rand::random();
        let aad = place.associated_data();
        // Encryption fails only for inputs of gigabytes.
        let sealed =
            self.cipher.encrypt(&nonce.into(), Payload { msg: plain.as_bytes(), aad: &aad }).unwrap_or_default();
        let mut out = Vec::with_capacity(12 + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        format!("{SEALED_V2}{}", base64::engine::general_purpose::STANDARD.encode(out))
    }

    /// The plain text of a value sealed at `place` (or, in the older format, sealed with no
    /// place); [`SecretError::WrongKey`] when it does not decrypt (another key, another place,
    /// or altered).
    pub fn open(&self, stored: &str, place: Place<'_>) -> Result<String, SecretError> {
        use aes_gcm::aead::{Aead, Payload};
        use base64::Engine as _;
        let (body, aad) = if let Some(body) = stored.strip_prefix(SEALED_V2) {
            (body, place.associated_data())
        } else if let Some(body) = stored.strip_prefix(SEALED_V1) {
            (body, Vec::new())
        } else {
            return Err(SecretError::Unknown);
        };
        let bytes = base64::engine::general_purpose::STANDARD.decode(body).map_err(|_| SecretError::Unknown)?;
        if bytes.len() < 12 + 16 {
            return Err(SecretError::Unknown);
        }
        let (nonce, sealed) = bytes.split_at(12);
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| SecretError::Unknown)?;
        let plain = self
            .cipher
            .decrypt(&nonce.into(), Payload { msg: sealed, aad: &aad })
            .map_err(|_| SecretError::WrongKey)?;
        String::from_utf8(plain).map_err(|_| SecretError::WrongKey)
    }

    /// A value sealed in the current format if `stored` is in an older one (`None`: nothing to
    /// do, or it does not open).
    pub fn reseal(&self, stored: &str, place: Place<'_>) -> Option<String> {
        if !Self::is_sealed(stored) || Self::is_current(stored) {
            return None;
        }
        self.open(stored, place).ok().map(|plain| self.seal(&plain, place))
    }

    /// Seals in the format used before places were bound (kept for the tests of the upgrade).
    #[cfg(test)]
    pub(crate) fn seal_v1(&self, plain: &str) -> String {
        use aes_gcm::aead::Aead;
        use base64::Engine as _;
        let nonce: [u8; 12] = rand::random();
        let sealed = self.cipher.encrypt(&nonce.into(), plain.as_bytes()).unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        format!("{SEALED_V1}{}", base64::engine::general_purpose::STANDARD.encode(out))
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
        use super::{Place, SecretBox, SecretError};
        let at = Place::new("agents", "api_key", "agent-1");
        let (key, text) = SecretBox::generate();
        let sealed = key.seal("sk-live-1234567890", at);
        assert!(sealed.starts_with("enc:v2:") && !sealed.contains("sk-live"), "{sealed}");
        assert_ne!(key.seal("sk-live-1234567890", at), sealed, "a fresh nonce each time");
        assert_eq!(key.open(&sealed, at).unwrap(), "sk-live-1234567890");
        assert_eq!(SecretBox::parse(&text).unwrap().open(&sealed, at).unwrap(), "sk-live-1234567890");
        let other = SecretBox::from_bytes([7; 32]);
        assert_eq!(other.open(&sealed, at), Err(SecretError::WrongKey));
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push(if sealed.ends_with('A') { 'B' } else { 'A' });
        assert!(key.open(&tampered, at).is_err());
        assert_eq!(key.open("sk-plain", at), Err(SecretError::Unknown));
    }

    #[test]
    fn a_value_copied_to_another_row_or_column_does_not_open() {
        use super::{Place, SecretBox, SecretError};
        let key = SecretBox::from_bytes([3; 32]);
        let sealed = key.seal("whsec_abc", Place::new("webhook_endpoints", "secret", "e1"));
        assert_eq!(key.open(&sealed, Place::new("webhook_endpoints", "secret", "e1")).unwrap(), "whsec_abc");
        for elsewhere in [
            Place::new("webhook_endpoints", "secret", "e2"),
            Place::new("webhook_endpoints", "prefix", "e1"),
            Place::new("identity_secrets", "secret", "e1"),
            // The parts cannot be shifted into one another.
            Place::new("webhook_endpoints", "secret", "e1\0"),
        ] {
            assert_eq!(key.open(&sealed, elsewhere), Err(SecretError::WrongKey), "{elsewhere:?}");
        }
    }

    #[test]
    fn values_sealed_before_places_open_and_are_sealed_again() {
        use super::{Place, SecretBox};
        let key = SecretBox::from_bytes([5; 32]);
        let at = Place::new("agents", "api_key", "a1");
        let old = key.seal_v1("sk-old");
        assert!(old.starts_with("enc:v1:") && !SecretBox::is_current(&old));
        // The older format carries no place: it opens wherever it is (until sealed again).
        assert_eq!(key.open(&old, at).unwrap(), "sk-old");
        let new = key.reseal(&old, at).expect("sealed again");
        assert!(SecretBox::is_current(&new));
        assert_eq!(key.open(&new, at).unwrap(), "sk-old");
        assert!(key.open(&new, Place::new("agents", "api_key", "a2")).is_err());
        assert_eq!(key.reseal(&new, at), None, "already current");
        assert_eq!(key.reseal("plain", at), None, "plain text is sealed by its own step");
        assert_eq!(SecretBox::from_bytes([6; 32]).reseal(&old, at), None, "another key");
    }

    #[test]
    fn keys_are_32_bytes_of_hex_or_base64() {
        use super::{SecretBox, SecretError};
        let hex_key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let a = SecretBox::parse(hex_key).unwrap();
        let b64 = "ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd7v8=";
        let at = super::Place::new("t", "c", "r");
        assert_eq!(SecretBox::parse(b64).unwrap().open(&a.seal("x", at), at).unwrap(), "x");
        assert_eq!(SecretBox::parse("short").err(), Some(SecretError::BadKey));
        assert_eq!(SecretBox::parse(&hex_key[..62]).err(), Some(SecretError::BadKey));
        assert_eq!(SecretBox::parse("").err(), Some(SecretError::BadKey));
    }
}
