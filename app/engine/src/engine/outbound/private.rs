//! The private destinations an operator names for services on the same machine or network (a
//! local model, an embeddings server, an owner's tool, a webhook receiver):
//! `PARLEY_PRIVATE_ENDPOINTS`, a comma-separated list of
//! - an address or a CIDR range (`127.0.0.1`, `10.0.0.0/8`, `fd00::/8`): every port there;
//! - `host:port` (`127.0.0.1:11434`, `[::1]:8080`, `ollama:11434`): that address or host name on
//!   that port only (a name on the list is trusted to resolve wherever it does);
//! - `*`: every private address (as `PARLEY_ALLOW_PRIVATE_ENDPOINTS`).
//!
//! A name listed with a port is used on that port only: on another port it is refused (even when
//! it would resolve to a public address; a public name needs no listing).
//!
//! Everything else keeps to the public-only rule of [`super`]. The list is read once at
//! start and lives as long as the process (so the settings that carry it stay `Copy`).

use std::net::{IpAddr, SocketAddr};

/// One allowed destination.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    /// Every port of the addresses in `net/len`.
    Range { net: IpAddr, len: u8 },
    /// One host (an address as written by `IpAddr`'s `Display`, or a lower-case name) on one port.
    Exact { host: String, port: u16 },
}

/// The parsed `PARLEY_PRIVATE_ENDPOINTS` (empty by default: no private destination).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrivateEndpoints {
    entries: &'static [Entry],
    all: bool,
}

impl PrivateEndpoints {
    /// Parses the list; an entry that is none of the accepted forms is an error naming it.
    pub fn parse(raw: &str) -> Result<PrivateEndpoints, String> {
        let mut entries = Vec::new();
        let mut all = false;
        for item in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item == "*" {
                all = true;
                continue;
            }
            entries.push(parse_entry(item).ok_or_else(|| {
                format!("`{item}` is not an address, a CIDR range (10.0.0.0/8) or host:port (ollama:11434)")
            })?);
        }
        if entries.is_empty() {
            return Ok(PrivateEndpoints { entries: &[], all });
        }
        // Once per process start (and per test server): kept for the process's life.
        Ok(PrivateEndpoints { entries: Box::leak(entries.into_boxed_slice()), all })
    }

    /// Every private address is allowed (`*`).
    pub fn all(&self) -> bool {
        self.all
    }

    /// `ip` is on the list, for `port` (`None` when it is not known: only ranges then match).
    pub fn allows_ip(&self, ip: IpAddr, port: Option<u16>) -> bool {
        self.all
            || self.entries.iter().any(|e| match e {
                Entry::Range { net, len } => in_range(ip, *net, *len),
                Entry::Exact { host, port: p } => Some(*p) == port && host.parse::<IpAddr>() == Ok(ip),
            })
    }

    /// The host name `name` is on the list, for `port` (`None`: for any of its ports).
    pub fn allows_name(&self, name: &str, port: Option<u16>) -> bool {
        self.all
            || self.entries.iter().any(|e| match e {
                Entry::Exact { host, port: p } => host.eq_ignore_ascii_case(name) && port.is_none_or(|q| q == *p),
                Entry::Range { .. } => false,
            })
    }
}

fn parse_entry(item: &str) -> Option<Entry> {
    if let Some((net, len)) = item.split_once('/') {
        let net: IpAddr = net.parse().ok()?;
        let len: u8 = len.parse().ok()?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        return (len <= max).then_some(Entry::Range { net, len });
    }
    if let Ok(ip) = item.parse::<IpAddr>() {
        return Some(Entry::Range { net: ip, len: if ip.is_ipv4() { 32 } else { 128 } });
    }
    if let Ok(addr) = item.parse::<SocketAddr>() {
        return Some(Entry::Exact { host: addr.ip().to_string(), port: addr.port() });
    }
    let (host, port) = item.rsplit_once(':')?;
    let valid = !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    valid.then(|| Some(Entry::Exact { host: host.to_ascii_lowercase(), port: port.parse().ok()? })).flatten()
}

fn in_range(ip: IpAddr, net: IpAddr, len: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - u32::from(len)) };
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = if len == 0 { 0 } else { u128::MAX << (128 - u32::from(len)) };
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_ranges_and_host_ports() {
        let list = PrivateEndpoints::parse(" 10.0.0.0/8, 127.0.0.1:8080 ,[::1]:9000, Ollama:11434,fd00::/8 ").unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(list.allows_ip(ip("10.1.2.3"), Some(80)) && list.allows_ip(ip("10.1.2.3"), None));
        assert!(!list.allows_ip(ip("11.0.0.1"), Some(80)));
        assert!(list.allows_ip(ip("127.0.0.1"), Some(8080)));
        assert!(!list.allows_ip(ip("127.0.0.1"), Some(8081)), "another port of a listed host:port");
        assert!(!list.allows_ip(ip("127.0.0.1"), None), "an exact entry needs its port");
        assert!(list.allows_ip(ip("::1"), Some(9000)) && list.allows_ip(ip("fd12::1"), Some(1)));
        assert!(list.allows_name("ollama", Some(11434)) && list.allows_name("OLLAMA", None));
        assert!(!list.allows_name("ollama", Some(11435)) && !list.allows_name("localhost", None));
        assert!(!list.all());
        assert_eq!(PrivateEndpoints::parse("").unwrap(), PrivateEndpoints::default());
        assert!(PrivateEndpoints::parse("*").unwrap().allows_ip(ip("127.0.0.1"), None));
        for bad in ["10.0.0.0/33", "nonsense", "host:port", ":80", "a b:80"] {
            assert!(PrivateEndpoints::parse(bad).is_err(), "{bad}");
        }
    }
}
