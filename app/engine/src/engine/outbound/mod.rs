//! One fence for every request Parley makes to an address someone typed: model providers,
//! embeddings, owners' tools, webhooks (issue 41, item 8). Only `https`, and never this machine
//! or the private network, so that nobody who can edit an agent, a tool or a webhook can make
//! Parley probe the network it runs in. The check is in the HTTP client's resolver, on every
//! address a name resolves to, at the moment of connecting (a name that changes its answer
//! between a check and the request — DNS rebinding — gets nowhere); addresses written as IP
//! literals are checked before every request ([`fence`]), and at save ([`check_typed`]).
//! Redirects are not followed by the owner-tool client (one could lead inside).
//!
//! Private destinations are allowed only as the operator lists them: [`private::PrivateEndpoints`]
//! (`PARLEY_PRIVATE_ENDPOINTS`, addresses, ranges or `host:port`: a local model, an embeddings
//! server, a receiver on this machine) or all of them with
//! [`OutboundSettings::allow_private`] (`PARLEY_ALLOW_PRIVATE_ENDPOINTS`). A listed destination
//! may use plain `http`.

pub mod private;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

pub use private::PrivateEndpoints;

/// Where typed endpoints may point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutboundSettings {
    /// Plain `http` and loopback, private, link-local and other non-public addresses are allowed.
    pub allow_private: bool,
    /// The private destinations allowed one by one.
    pub private: PrivateEndpoints,
}

impl OutboundSettings {
    /// Every private address allowed (`PARLEY_ALLOW_PRIVATE_ENDPOINTS`).
    pub fn open() -> OutboundSettings {
        OutboundSettings { allow_private: true, private: PrivateEndpoints::default() }
    }

    /// A request may reach `ip` on `port` (`None`: any port; then only listed ranges count).
    pub fn allows(&self, ip: IpAddr, port: Option<u16>) -> bool {
        self.allow_private || self.private.all() || is_public(ip) || self.private.allows_ip(ip, port)
    }

    /// Private addresses are allowed anywhere.
    fn all_private(&self) -> bool {
        self.allow_private || self.private.all()
    }

    /// `url`'s host is on the private list for its port (so plain `http` is fine there).
    fn listed(&self, url: &url::Url) -> bool {
        let port = url.port_or_known_default();
        match url.host() {
            Some(url::Host::Domain(name)) => self.private.allows_name(name, port),
            Some(url::Host::Ipv4(v4)) => self.private.allows_ip(IpAddr::V4(v4), port),
            Some(url::Host::Ipv6(v6)) => self.private.allows_ip(IpAddr::V6(v6), port),
            None => false,
        }
    }
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
            OutboundError::NotHttps if !settings.all_private() => "An https:// address.".to_owned(),
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

/// Checks an address someone typed: a URL, `https` (or `http` when private addresses are
/// allowed or the host is listed), with a host and no credentials, and not a non-public IP
/// literal off the list. Host names are checked when they are resolved (see the module's notes),
/// except a name listed with another port, refused here.
pub fn check_url(raw: &str, settings: OutboundSettings) -> Result<url::Url, OutboundError> {
    let url = url::Url::parse(raw.trim()).map_err(|_| OutboundError::NotAUrl)?;
    fence(&url, settings)?;
    Ok(url)
}

/// The checks of [`check_url`] on a parsed URL, without resolving a name: before every request
/// to a typed address (a provider's base URL written past the console, by the CLI or straight
/// into the database, is refused here before any connection). Parsing aside it costs a few
/// comparisons, so it runs on every model call.
pub fn fence(url: &url::Url, settings: OutboundSettings) -> Result<(), OutboundError> {
    match url.scheme() {
        "https" => {}
        "http" if settings.all_private() || settings.listed(url) => {}
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
    let port = url.port_or_known_default();
    if let Some(ip) = ip
        && !settings.allows(ip, port)
    {
        return Err(OutboundError::Private(ip.to_string()));
    }
    if let Some(url::Host::Domain(name)) = url.host()
        && !settings.all_private()
        && settings.private.allows_name(name, None)
        && !settings.private.allows_name(name, port)
    {
        return Err(OutboundError::Private(format!("{name}:{}", port.unwrap_or(0))));
    }
    Ok(())
}

/// Refuses a host name that resolves to any non-public address, with the address in the error
/// (the request would be refused by the client's resolver anyway; this says why in words).
/// A name that does not resolve passes: the request then fails to connect.
pub async fn check_host(url: &url::Url, settings: OutboundSettings) -> Result<(), OutboundError> {
    let Some(url::Host::Domain(domain)) = url.host() else { return Ok(()) };
    let port = url.port_or_known_default().unwrap_or(443);
    if settings.all_private() || settings.private.allows_name(domain, Some(port)) {
        return Ok(());
    }
    let Ok(found) = tokio::net::lookup_host((domain, port)).await else { return Ok(()) };
    for addr in found {
        if !settings.allows(addr.ip(), Some(port)) {
            return Err(OutboundError::Private(format!("{domain} ({})", addr.ip())));
        }
    }
    Ok(())
}

/// How a name becomes addresses: the system's resolver, or a test's.
type Lookup =
    Arc<dyn Fn(String) -> futures::future::BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> + Send + Sync>;

/// A resolver that refuses names resolving to any non-public address off the private list (a
/// name on the list resolves as it does; the port is not known here, see [`fence`]).
pub struct PublicOnly {
    settings: OutboundSettings,
    lookup: Lookup,
}

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let settings = self.settings;
        let lookup = (self.lookup)(host.clone());
        Box::pin(async move {
            type Failure = Box<dyn std::error::Error + Send + Sync>;
            let addrs = lookup.await.map_err(|e| Box::new(e) as Failure)?;
            let listed = settings.private.allows_name(&host, None);
            if let Some(bad) = addrs.iter().find(|a| !listed && !settings.allows(a.ip(), None)) {
                return Err(Box::new(OutboundError::Private(format!("{host} ({})", bad.ip()))) as Failure);
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok::<_, Failure>(addrs)
        })
    }
}

/// The resolver of every outbound client (model calls, embeddings, tools, webhooks).
pub fn resolver(settings: OutboundSettings) -> Arc<PublicOnly> {
    let lookup: Lookup = Arc::new(|host: String| {
        Box::pin(async move { Ok(tokio::net::lookup_host((host.as_str(), 0)).await?.collect()) })
    });
    Arc::new(PublicOnly { settings, lookup })
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
    fenced(settings, reqwest::Client::builder().user_agent(concat!("Parley/", env!("CARGO_PKG_VERSION"))))
}

/// A fenced client that says who it is (the knowledge crawler) and gives up after `timeout`.
pub fn named_client(settings: OutboundSettings, user_agent: &str, timeout: Duration) -> reqwest::Client {
    fenced(settings, reqwest::Client::builder().user_agent(user_agent).timeout(timeout))
}

/// `builder` behind the fence: no redirects followed, no proxy, the checking resolver.
fn fenced(settings: OutboundSettings, builder: reqwest::ClientBuilder) -> reqwest::Client {
    let builder = builder
        .connect_timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve the name itself, past the resolver's check.
        .no_proxy();
    let builder = if settings.all_private() { builder } else { builder.dns_resolver(resolver(settings)) };
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
    use std::str::FromStr;

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
        let open = OutboundSettings::open();
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

    #[test]
    fn listed_private_destinations_and_nothing_else() {
        let private = PrivateEndpoints::parse("127.0.0.1:11434,10.0.0.0/8,ollama:11434").unwrap();
        let listed = OutboundSettings { allow_private: false, private };
        // Plain http and a private literal: on the list, on its port only.
        assert!(check_url("http://127.0.0.1:11434/v1", listed).is_ok());
        assert_eq!(check_url("http://127.0.0.1:11435/v1", listed), Err(OutboundError::NotHttps));
        assert_eq!(check_url("https://127.0.0.1:11435/v1", listed), Err(OutboundError::Private("127.0.0.1".into())));
        assert!(check_url("http://10.9.8.7:8080/", listed).is_ok() && check_url("https://10.9.8.7/", listed).is_ok());
        assert!(matches!(check_url("https://169.254.169.254/", listed), Err(OutboundError::Private(_))));
        assert!(matches!(check_url("https://[::ffff:169.254.169.254]/", listed), Err(OutboundError::Private(_))));
        // A listed name on its port, and refused on another before any lookup.
        assert!(check_url("http://ollama:11434/v1", listed).is_ok());
        assert!(matches!(check_url("https://ollama:8443/v1", listed), Err(OutboundError::Private(_))));
        // Unlisted: private literals refused, public names and addresses over https only.
        let strict = OutboundSettings::default();
        assert!(matches!(check_url("https://127.0.0.1:11434/v1", strict), Err(OutboundError::Private(_))));
        assert_eq!(check_url("http://ollama:11434/v1", strict), Err(OutboundError::NotHttps));
        assert!(check_url("https://1.1.1.1/", strict).is_ok());
        assert!(check_url("http://169.254.169.254/", OutboundSettings::open()).is_ok());
    }

    /// DNS rebinding: a name that answers a public address when checked and a private one when
    /// the request connects is refused at the connect, and nothing reaches the private address.
    #[tokio::test]
    async fn a_dns_answer_that_changes_before_connecting_is_refused() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let local = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        let asked = Arc::new(AtomicUsize::new(0));
        let answers = asked.clone();
        let lookup: Lookup = Arc::new(move |_host: String| {
            let first = answers.fetch_add(1, Ordering::SeqCst) == 0;
            Box::pin(async move {
                let ip: IpAddr = if first { "93.184.216.34".parse().unwrap() } else { local.ip() };
                Ok(vec![SocketAddr::new(ip, 0)])
            })
        });
        let resolver = Arc::new(PublicOnly { settings: OutboundSettings::default(), lookup });
        // The check: a public answer.
        let name = reqwest::dns::Name::from_str("rebind.example").unwrap();
        let checked = reqwest::dns::Resolve::resolve(&*resolver, name).await.map(|a| a.collect::<Vec<_>>());
        assert_eq!(checked.unwrap()[0].ip().to_string(), "93.184.216.34");
        // The connect: the answer is now this machine.
        let client = reqwest::Client::builder().dns_resolver(resolver).no_proxy().build().unwrap();
        let error = client.get(format!("http://rebind.example:{}/", local.port())).send().await.unwrap_err();
        assert!(matches!(refusal(&error), Some(OutboundError::Private(_))), "{error:?}");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        assert_eq!(accepted.load(Ordering::SeqCst), 0, "nothing reached the private address");
    }

    #[tokio::test]
    async fn names_of_private_addresses_are_refused() {
        // `localhost` resolves to loopback: refused by the check and by the client's resolver,
        // before any connection.
        let url = check_url("https://localhost:9/", OutboundSettings::default()).unwrap();
        let checked = check_host(&url, OutboundSettings::default()).await;
        assert!(matches!(&checked, Err(OutboundError::Private(a)) if a.starts_with("localhost (")), "{checked:?}");
        assert_eq!(check_host(&url, OutboundSettings::open()).await, Ok(()));
        let error = client(OutboundSettings::default()).get(url).send().await.unwrap_err();
        assert!(refusal(&error).is_some() || format!("{error:?}").contains("Private"), "{error:?}");
    }
}
