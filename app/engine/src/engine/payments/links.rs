//! Signed, expiring links to an order's pay page: `/pay/{id}?exp={unix seconds}&sig={base64url
//! HMAC-SHA256 of the id and exp}` under a server key kept in the database (so every server on
//! the database, and a restarted one, accepts the links the others made). Whoever holds the link
//! may see the order and, on a sandbox server, mark it paid: it is handed only to the visitor the
//! order was made for (the QR code and link in their chat).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How long a link outlives its order's payment window (to see that it was paid), in ms.
pub const LINK_GRACE_MS: i64 = 60 * 60 * 1000;

/// Why a link was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// No `exp`/`sig`, or a signature this server did not make.
    #[error("the link is not signed by this server")]
    Forged,
    #[error("the link has expired")]
    Expired,
}

/// Makes and checks pay links.
#[derive(Clone)]
pub struct PayLinks {
    public_url: String,
    key: Vec<u8>,
}

impl std::fmt::Debug for PayLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PayLinks").field("public_url", &self.public_url).finish_non_exhaustive()
    }
}

impl PayLinks {
    pub fn new(public_url: &str, key: &[u8]) -> Self {
        PayLinks { public_url: public_url.trim_end_matches('/').to_owned(), key: key.to_vec() }
    }

    fn mac(&self, order_id: &str, exp_s: i64) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes keys of any size");
        mac.update(b"parley pay link v1\n");
        mac.update(order_id.as_bytes());
        mac.update(b"\n");
        mac.update(exp_s.to_string().as_bytes());
        mac
    }

    /// The query string (`exp=…&sig=…`) of a link to `order_id` valid until `exp_s`.
    pub fn query(&self, order_id: &str, exp_s: i64) -> String {
        let sig = URL_SAFE_NO_PAD.encode(self.mac(order_id, exp_s).finalize().into_bytes());
        format!("exp={exp_s}&sig={sig}")
    }

    /// The pay page of an order whose payment window ends at `order_expires_ms`.
    pub fn page_url(&self, order_id: &str, order_expires_ms: i64) -> String {
        let exp_s = (order_expires_ms + LINK_GRACE_MS + 999) / 1000;
        format!("{}/pay/{order_id}?{}", self.public_url, self.query(order_id, exp_s))
    }

    /// Checks a link's `exp` and `sig` for `order_id` at `now_ms`.
    pub fn check(&self, order_id: &str, exp: Option<&str>, sig: Option<&str>, now_ms: i64) -> Result<(), LinkError> {
        let (Some(exp), Some(sig)) = (exp, sig) else { return Err(LinkError::Forged) };
        let exp_s: i64 = exp.parse().map_err(|_| LinkError::Forged)?;
        let sig = URL_SAFE_NO_PAD.decode(sig).map_err(|_| LinkError::Forged)?;
        self.mac(order_id, exp_s).verify_slice(&sig).map_err(|_| LinkError::Forged)?;
        if exp_s.saturating_mul(1000) <= now_ms {
            return Err(LinkError::Expired);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(url: &str) -> (String, String, String) {
        let (path, query) = url.split_once('?').unwrap();
        let id = path.rsplit('/').next().unwrap().to_owned();
        let mut exp = String::new();
        let mut sig = String::new();
        for pair in query.split('&') {
            match pair.split_once('=').unwrap() {
                ("exp", v) => exp = v.into(),
                ("sig", v) => sig = v.into(),
                _ => panic!("{pair}"),
            }
        }
        (id, exp, sig)
    }

    #[test]
    fn a_link_opens_its_order_until_it_expires() {
        let links = PayLinks::new("http://parley.test/", b"key-1");
        let url = links.page_url("ORD_a", 1_000_000);
        assert!(url.starts_with("http://parley.test/pay/ORD_a?exp="), "{url}");
        let (id, exp, sig) = parts(&url);
        let until = 1_000_000 + LINK_GRACE_MS;
        assert_eq!(links.check(&id, Some(&exp), Some(&sig), until - 1), Ok(()));
        assert_eq!(links.check(&id, Some(&exp), Some(&sig), until), Err(LinkError::Expired));
    }

    #[test]
    fn a_changed_or_foreign_link_is_forged() {
        let links = PayLinks::new("http://parley.test", b"key-1");
        let (id, exp, sig) = parts(&links.page_url("ORD_a", 1_000_000));
        // Another order, a later expiry, another server's key, no signature, garbage.
        assert_eq!(links.check("ORD_b", Some(&exp), Some(&sig), 0), Err(LinkError::Forged));
        let later = (exp.parse::<i64>().unwrap() + 3600).to_string();
        assert_eq!(links.check(&id, Some(&later), Some(&sig), 0), Err(LinkError::Forged));
        let other = PayLinks::new("http://parley.test", b"key-2");
        assert_eq!(other.check(&id, Some(&exp), Some(&sig), 0), Err(LinkError::Forged));
        assert_eq!(links.check(&id, Some(&exp), None, 0), Err(LinkError::Forged));
        assert_eq!(links.check(&id, None, Some(&sig), 0), Err(LinkError::Forged));
        assert_eq!(links.check(&id, Some("soon"), Some(&sig), 0), Err(LinkError::Forged));
        assert_eq!(links.check(&id, Some(&exp), Some("%%%"), 0), Err(LinkError::Forged));
        // An expired link that was forged is forged, not expired.
        assert_eq!(links.check("ORD_b", Some(&exp), Some(&sig), i64::MAX), Err(LinkError::Forged));
    }
}
