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

impl OutboundError {
    /// The refusal as a form field's message.
    pub fn for_field(&self, settings: OutboundSettings) -> String {
        match self {
            OutboundError::NotHttps if !settings.allow_private => "An https:// address.".to_owned(),
            OutboundError::NotHttps => "An http:// or https:// address.".to_owned(),
            other => {
                let text = other.to_string();
                format!("{}{}.", text[..1].to_uppercase(), &text[1..])
            }
        }
    }
}

/// Whether an address is on the public internet: not in any block of IANA's special-purpose
/// address registries (IPv4 and IPv6) that is not globally reachable — loopback, private
/// (RFC 1918, unique local), link-local (cloud metadata services live there), shared
/// (carrier-grade NAT), site-local, discard, documentation, benchmarking, reserved — nor
/// broadcast or multicast. An IPv4 address carried inside IPv6 (mapped, compatible, the NAT64
/// well-known prefix `64:ff9b::/96`, 6to4 `2002::/16`) is judged as that IPv4 address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

/// IPv4 blocks that are not globally reachable (IANA IPv4 special-purpose registry), as
/// `(network, prefix length)`. The few globally reachable blocks inside them are in
/// [`V4_REACHABLE`].
const V4_NOT_PUBLIC: &[([u8; 4], u8)] = &[
    ([0, 0, 0, 0], 8),       // "this network"
    ([10, 0, 0, 0], 8),      // private
    ([100, 64, 0, 0], 10),   // shared address space (carrier-grade NAT)
    ([127, 0, 0, 0], 8),     // loopback
    ([169, 254, 0, 0], 16),  // link-local (cloud metadata)
    ([172, 16, 0, 0], 12),   // private
    ([192, 0, 0, 0], 24),    // IETF protocol assignments
    ([192, 0, 2, 0], 24),    // documentation (TEST-NET-1)
    ([192, 88, 99, 0], 24),  // deprecated 6to4 relay anycast
    ([192, 168, 0, 0], 16),  // private
    ([198, 18, 0, 0], 15),   // benchmarking
    ([198, 51, 100, 0], 24), // documentation (TEST-NET-2)
    ([203, 0, 113, 0], 24),  // documentation (TEST-NET-3)
    ([224, 0, 0, 0], 4),     // multicast
    ([240, 0, 0, 0], 4),     // reserved, and 255.255.255.255 (broadcast)
];

/// Globally reachable blocks inside [`V4_NOT_PUBLIC`] (PCP and TURN anycast).
const V4_REACHABLE: &[([u8; 4], u8)] = &[([192, 0, 0, 9], 32), ([192, 0, 0, 10], 32)];

/// IPv6 blocks that are not globally reachable (IANA IPv6 special-purpose registry, plus the
/// deprecated site-local block), as `(network, prefix length)`; exceptions in [`V6_REACHABLE`].
const V6_NOT_PUBLIC: &[([u16; 8], u8)] = &[
    ([0, 0, 0, 0, 0, 0, 0, 0], 96),          // unspecified, loopback, IPv4-compatible (::/96)
    ([0, 0, 0, 0, 0, 0xffff, 0, 0], 96),     // IPv4-mapped (judged as IPv4 before this)
    ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),  // local-use NAT64
    ([0x100, 0, 0, 0, 0, 0, 0, 0], 64),      // discard-only
    ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23),     // IETF protocol assignments (Teredo, ORCHID, …)
    ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), // documentation
    ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),     // documentation
    ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16),     // segment routing (SRv6) SIDs
    ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),      // unique local
    ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),     // link-local
    ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),     // site-local (deprecated, still routed inside some networks)
    ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),      // multicast
];

/// Globally reachable blocks inside `2001::/23`.
const V6_REACHABLE: &[([u16; 8], u8)] = &[
    ([0x2001, 1, 0, 0, 0, 0, 0, 1], 128),    // port control protocol anycast
    ([0x2001, 1, 0, 0, 0, 0, 0, 2], 128),    // TURN anycast
    ([0x2001, 1, 0, 0, 0, 0, 0, 3], 128),    // DNS-SD service registration anycast
    ([0x2001, 3, 0, 0, 0, 0, 0, 0], 32),     // AMT
    ([0x2001, 4, 0x112, 0, 0, 0, 0, 0], 48), // AS112-v6
    ([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28),  // ORCHIDv2
    ([0x2001, 0x30, 0, 0, 0, 0, 0, 0], 28),  // drone remote ID
];

fn in_v4(ip: u32, &(net, len): &([u8; 4], u8)) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - u32::from(len)) };
    ip & mask == u32::from_be_bytes(net) & mask
}

fn in_v6(ip: u128, &(net, len): &([u16; 8], u8)) -> bool {
    let mask = if len == 0 { 0 } else { u128::MAX << (128 - u32::from(len)) };
    ip & mask == u128::from(Ipv6Addr::from(net)) & mask
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let bits = u32::from(ip);
    !V4_NOT_PUBLIC.iter().any(|b| in_v4(bits, b)) || V4_REACHABLE.iter().any(|b| in_v4(bits, b))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let bits = u128::from(ip);
    !V6_NOT_PUBLIC.iter().any(|b| in_v6(bits, b)) || V6_REACHABLE.iter().any(|b| in_v6(bits, b))
}

/// The IPv4 address an IPv6 address stands for, where it carries one a router would reach:
/// IPv4-mapped, the NAT64 well-known prefix `64:ff9b::/96` (RFC 6052) and 6to4 `2002::/16`
/// (RFC 3056, the address in the second and third groups).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if let Some(v4) = ip.to_ipv4_mapped() {
        Some(v4)
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        Some(v4(s[6], s[7]))
    } else if s[0] == 0x2002 {
        Some(v4(s[1], s[2]))
    } else {
        None
    }
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
pub struct PublicOnly;

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

/// The resolver that refuses names resolving to any non-public address, for other clients
/// (the model calls') that must keep to the same rule.
pub fn public_only() -> Arc<PublicOnly> {
    Arc::new(PublicOnly)
}

/// Checks an address an administrator typed for a model provider or another service: the
/// rules of [`check_url`] and, for a name, of [`check_host`].
pub async fn check_typed(raw: &str, settings: OutboundSettings) -> Result<url::Url, OutboundError> {
    let url = check_url(raw, settings)?;
    check_host(&url, settings).await?;
    Ok(url)
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

    /// One address from each special-purpose block of the IANA registries (and the edges
    /// around them), with whether a request may go there.
    #[test]
    fn only_public_addresses_are_public() {
        let table: &[(&str, bool)] = &[
            // IPv4
            ("0.1.2.3", false),
            ("10.1.2.3", false),
            ("100.64.0.1", false),
            ("100.127.255.255", false),
            ("100.128.0.1", true),
            ("127.0.0.1", false),
            ("169.254.169.254", false),
            ("172.16.0.1", false),
            ("172.31.255.255", false),
            ("172.32.0.1", true),
            ("192.0.0.8", false),
            ("192.0.0.9", true),
            ("192.0.2.1", false),
            ("192.88.99.1", false),
            ("192.168.1.1", false),
            ("198.18.0.1", false),
            ("198.19.255.255", false),
            ("198.20.0.1", true),
            ("198.51.100.7", false),
            ("203.0.113.9", false),
            ("224.0.0.1", false),
            ("240.0.0.1", false),
            ("255.255.255.255", false),
            ("1.1.1.1", true),
            ("93.184.216.34", true),
            // IPv6
            ("::", false),
            ("::1", false),
            ("::a00:1", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:10.0.0.1", false),
            ("::ffff:8.8.8.8", true),
            ("64:ff9b::a9fe:a9fe", false),
            ("64:ff9b::7f00:1", false),
            ("64:ff9b::808:808", true),
            ("64:ff9b:1::1", false),
            ("100::1", false),
            ("2001::1", false),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", false),
            ("2001:2::1", false),
            ("2001:10::1", false),
            ("2001:3::1", true),
            ("2001:20::1", true),
            ("2001:db8::1", false),
            ("2002:7f00:1::1", false),
            ("2002:a9fe:a9fe::1", false),
            ("2002:808:808::1", true),
            ("3fff::1", false),
            ("5f00::1", false),
            ("fc00::1", false),
            ("fd00::1", false),
            ("fe80::1", false),
            ("fec0::1", false),
            ("feff::1", false),
            ("ff02::1", false),
            ("2606:4700:4700::1111", true),
            ("2001:4860:4860::8888", true),
        ];
        let wrong: Vec<_> = table.iter().filter(|(ip, public)| is_public(ip.parse().unwrap()) != *public).collect();
        assert!(wrong.is_empty(), "judged wrongly: {wrong:?}");
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
