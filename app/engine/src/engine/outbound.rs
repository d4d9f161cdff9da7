//! Requests to addresses an owner typed (their own tools' endpoints): only `https`, and never to
//! this machine or the private network, so that nobody who can edit a tool can make Parley probe
//! the network it runs in. The check is in the HTTP client's resolver, on every address a name
//! resolves to, at the moment of connecting (a name that changes its answer between a check and
//! the request — DNS rebinding — gets nowhere); addresses written as IP literals are checked
//! before the request. Redirects are not followed (one could lead inside).
//!
//! [`OutboundSettings::allow_private`] (`PARLEY_ALLOW_PRIVATE_ENDPOINTS`) lifts both rules, for a
//! service on the same machine or network and for tests.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Where owner-defined endpoints may point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutboundSettings {
    /// Plain `http` and loopback, private, link-local and other non-public addresses are allowed.
    pub allow_private: bool,
}

/// Why an address is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutboundError {
    #[error("the address is not a valid URL")]
    NotAUrl,
    #[error("only https addresses are allowed")]
    NotHttps,
    #[error("the address has no host name")]
    NoHost,
    #[error("`{0}` is a private, loopback or reserved address; endpoints must be on the public internet")]
    Private(String),
    #[error("the address must not contain a user name or password")]
    Credentials,
}

/// Whether an address is on the public internet: not loopback, private (RFC 1918, unique local),
/// link-local (cloud metadata services live there), shared (carrier-grade NAT), unspecified,
/// broadcast, multicast, documentation or benchmarking space. IPv4 inside IPv6 is judged as IPv4.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // 100.64.0.0/10, shared address space
        || (a == 100 && (64..128).contains(&b))
        // 192.0.0.0/24, protocol assignments
        || (a == 192 && b == 0 && c == 0)
        // 198.18.0.0/15, benchmarking
        || (a == 198 && (b == 18 || b == 19))
        // 240.0.0.0/4, reserved
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_unique_local()
        || ip.is_unicast_link_local()
        // 2001:db8::/32, documentation
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        // 64:ff9b:1::/48, local NAT64; ::/96 (IPv4-compatible, deprecated)
        || (first == 0x0064 && ip.segments()[1] == 0xff9b && ip.segments()[2] == 1)
        || ip.segments()[..6].iter().all(|s| *s == 0))
}

/// Checks an address an owner typed: a URL, `https` (or `http` when private addresses are
/// allowed), with a host and no credentials, and not a non-public IP literal. Host names are
/// checked when they are resolved (see the module's notes).
pub fn check_url(raw: &str, settings: OutboundSettings) -> Result<url::Url, OutboundError> {
    let url = url::Url::parse(raw.trim()).map_err(|_| OutboundError::NotAUrl)?;
    match url.scheme() {
        "https" => {}
        "http" if settings.allow_private => {}
        _ => return Err(OutboundError::NotHttps),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(OutboundError::Credentials);
    }
    let ip = match url.host() {
        None => return Err(OutboundError::NoHost),
        Some(url::Host::Domain("")) => return Err(OutboundError::NoHost),
        Some(url::Host::Domain(_)) => None,
        Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
    };
    if let Some(ip) = ip
        && !settings.allow_private
        && !is_public(ip)
    {
        return Err(OutboundError::Private(ip.to_string()));
    }
    Ok(url)
}

/// Refuses a host name that resolves to any non-public address, with the address in the error
/// (the request would be refused by the client's resolver anyway; this says why in words).
/// A name that does not resolve passes: the request then fails to connect.
pub async fn check_host(url: &url::Url, settings: OutboundSettings) -> Result<(), OutboundError> {
    let Some(url::Host::Domain(domain)) = url.host() else { return Ok(()) };
    if settings.allow_private {
        return Ok(());
    }
    let port = url.port_or_known_default().unwrap_or(443);
    let Ok(found) = tokio::net::lookup_host((domain, port)).await else { return Ok(()) };
    for addr in found {
        if !is_public(addr.ip()) {
            return Err(OutboundError::Private(format!("{domain} ({})", addr.ip())));
        }
    }
    Ok(())
}

/// A resolver that refuses names resolving to any non-public address.
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            type Failure = Box<dyn std::error::Error + Send + Sync>;
            let addrs: Vec<SocketAddr> = match tokio::net::lookup_host((host.as_str(), 0)).await {
                Ok(found) => found.collect(),
                Err(e) => return Err(Box::new(e) as Failure),
            };
            if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
                return Err(Box::new(OutboundError::Private(format!("{host} ({})", bad.ip()))) as Failure);
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok::<_, Failure>(addrs)
        })
    }
}

/// The HTTP client for owner-defined endpoints.
pub fn client(settings: OutboundSettings) -> reqwest::Client {
    let builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve the name itself, past the resolver's check.
        .no_proxy()
        .user_agent(concat!("Parley/", env!("CARGO_PKG_VERSION")));
    let builder = if settings.allow_private { builder } else { builder.dns_resolver(Arc::new(PublicOnly)) };
    builder.build().unwrap_or_else(|e| {
        tracing::error!(error = %e, "outbound HTTP client; using the default one");
        reqwest::Client::new()
    })
}

/// The refusal inside a failed request, when the resolver refused its address.
pub fn refusal(error: &reqwest::Error) -> Option<OutboundError> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refused) = e.downcast_ref::<OutboundError>() {
            return Some(refused.clone());
        }
        source = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "198.18.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "2001:db8::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8", "100.128.0.1"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn urls_must_be_https_public_and_without_credentials() {
        let strict = OutboundSettings::default();
        let open = OutboundSettings { allow_private: true };
        assert!(check_url("https://shop.example.com/orders/{id}", strict).is_ok());
        assert_eq!(check_url("http://shop.example.com/", strict), Err(OutboundError::NotHttps));
        assert_eq!(check_url("ftp://shop.example.com/", open), Err(OutboundError::NotHttps));
        assert_eq!(check_url("file:///etc/passwd", open), Err(OutboundError::NotHttps));
        assert_eq!(check_url("not a url", strict), Err(OutboundError::NotAUrl));
        assert_eq!(check_url("https://user:pw@shop.example.com/", strict), Err(OutboundError::Credentials));
        assert_eq!(check_url("https://127.0.0.1:8080/", strict), Err(OutboundError::Private("127.0.0.1".into())));
        assert_eq!(check_url("https://[::1]/", strict), Err(OutboundError::Private("::1".into())));
        assert!(matches!(check_url("https://169.254.169.254/latest/", strict), Err(OutboundError::Private(_))));
        assert!(check_url("http://127.0.0.1:8080/", open).is_ok());
    }

    #[tokio::test]
    async fn names_of_private_addresses_are_refused() {
        // `localhost` resolves to loopback: refused by the check and by the client's resolver,
        // before any connection.
        let url = check_url("https://localhost:9/", OutboundSettings::default()).unwrap();
        let checked = check_host(&url, OutboundSettings::default()).await;
        assert!(matches!(&checked, Err(OutboundError::Private(a)) if a.starts_with("localhost (")), "{checked:?}");
        assert_eq!(check_host(&url, OutboundSettings { allow_private: true }).await, Ok(()));
        let error = client(OutboundSettings::default()).get(url).send().await.unwrap_err();
        assert!(refusal(&error).is_some() || format!("{error:?}").contains("Private"), "{error:?}");
    }
}
