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
}
