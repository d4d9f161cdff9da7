//! Who is asking: the client's IP address. It is the socket's peer address, unless that peer is
//! a proxy the operator trusts (`PARLEY_TRUSTED_PROXIES`, addresses or CIDR ranges): then it is
//! the right-most `X-Forwarded-For` entry that is not itself a trusted proxy. A client cannot
//! choose its address by sending the header itself: an untrusted peer's header is ignored.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use http::HeaderMap;
use ipnet::IpNet;

/// The proxies whose `X-Forwarded-For` is believed, and how many requests brought the header
/// from a peer that is not one of them (a proxy the operator forgot to name: every visitor then
/// looks like the proxy, and shares its limits).
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies(Vec<IpNet>, Arc<AtomicU64>);

impl TrustedProxies {
    /// Parses a comma-separated list of addresses and CIDR ranges (`10.0.0.0/8, 127.0.0.1`).
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut nets = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let net = match IpNet::from_str(item) {
                Ok(net) => net,
                Err(_) => IpAddr::from_str(item).map(IpNet::from).map_err(|_| {
                    format!("`{item}` is neither an IP address nor a CIDR range (in the trusted proxies)")
                })?,
            };
            nets.push(net);
        }
        Ok(TrustedProxies(nets, Arc::default()))
    }

    /// Whether `ip` is one of the trusted proxies.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// Requests so far that carried `X-Forwarded-For` from a peer that is not a trusted proxy.
    pub fn untrusted_forwards(&self) -> u64 {
        self.1.load(Ordering::Relaxed)
    }

    /// The client's address for a request that came from `peer` with `headers`.
    pub fn client_ip(&self, peer: SocketAddr, headers: &HeaderMap) -> IpAddr {
        let mut ip = canonical(peer.ip());
        if !self.trusts(ip) {
            if headers.contains_key("x-forwarded-for") && self.1.fetch_add(1, Ordering::Relaxed) == 0 {
                tracing::warn!(
                    peer = %ip,
                    "a request carries X-Forwarded-For from a peer that is not a trusted proxy: the header is \
                     ignored; if this peer is your proxy, name it in PARLEY_TRUSTED_PROXIES"
                );
            }
            return ip;
        }
        // Walk the chain from the nearest hop back; the first address not a trusted proxy is the
        // client. Every header line counts, in order.
        let hops: Vec<IpAddr> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|s| IpAddr::from_str(s.trim()).map(canonical))
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        for hop in hops.into_iter().rev() {
            ip = hop;
            if !self.trusts(hop) {
                break;
            }
        }
        ip
    }
}

/// A client address as limits count it: IPv4 as it is (mapped IPv4 too), IPv6 by its /64, which
/// one subscriber usually holds whole (so a new address from the same /64 is the same client).
pub fn address_group(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        v4 => v4.to_string(),
    }
}

/// IPv4 addresses mapped into IPv6 (`::ffff:1.2.3.4`) as plain IPv4, so one client is one key.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in xff {
            h.append("x-forwarded-for", v.parse().expect("header"));
        }
        h
    }

    #[test]
    fn an_untrusted_peer_cannot_name_its_address() {
        let trust = TrustedProxies::parse("10.0.0.0/8").expect("list");
        let peer: SocketAddr = "203.0.113.9:5000".parse().expect("addr");
        assert_eq!(trust.client_ip(peer, &headers(&["1.2.3.4"])), "203.0.113.9".parse::<IpAddr>().expect("ip"));
        let none = TrustedProxies::default();
        assert_eq!(none.client_ip(peer, &headers(&["1.2.3.4"])), peer.ip());
    }

    #[test]
    fn behind_trusted_proxies_the_nearest_untrusted_hop_is_the_client() {
        let trust = TrustedProxies::parse("10.0.0.0/8, 127.0.0.1").expect("list");
        let peer: SocketAddr = "127.0.0.1:5000".parse().expect("addr");
        // A client-supplied first entry (6.6.6.6) is not believed: 198.51.100.7 reached proxy 10.1.1.1.
        let h = headers(&["6.6.6.6, 198.51.100.7", "10.1.1.1"]);
        assert_eq!(trust.client_ip(peer, &h), "198.51.100.7".parse::<IpAddr>().expect("ip"));
        // A garbled header falls back to the peer.
        assert_eq!(trust.client_ip(peer, &headers(&["nonsense"])), peer.ip());
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:1".parse().expect("addr");
        assert!(trust.trusts(mapped.ip()));
    }

    #[test]
    fn a_bad_list_is_refused_with_the_item() {
        let e = TrustedProxies::parse("10.0.0.0/8, proxy.local").expect_err("refused");
        assert!(e.contains("proxy.local"), "{e}");
    }
}
