//! Model endpoints on plain `http://` that speak HTTP/2 with prior knowledge (h2c): self-hosted
//! gateways and local model servers. Hosted providers already negotiate HTTP/2 over TLS (ALPN);
//! a plain-http endpoint would otherwise get one HTTP/1.1 connection per answer streaming at
//! that moment, each with its own socket and buffers on both sides.
//!
//! The operator lists such endpoints (`PARLEY_H2C_ENDPOINTS`, the forms of
//! [`PrivateEndpoints`]: `host:port`, an address or a range, `*` for every plain-http endpoint).
//! Answers to a listed endpoint share few connections: each connection carries at most
//! `streams_per_connection` answers at once (servers cap concurrent streams; hyper's default is
//! 200), and a further answer opens another. A connection's client is kept (its idle connection
//! closes after the pool's idle timeout), so the connections in use stay close to
//! `answers streaming / streams_per_connection`, rounded up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::engine::outbound::{self, OutboundSettings, PrivateEndpoints};

/// Answers one connection carries at once unless the operator says otherwise.
pub const DEFAULT_STREAMS_PER_CONNECTION: usize = 100;

/// Which plain-http model endpoints speak h2c, and how many answers share a connection.
#[derive(Clone, Copy, Debug)]
pub struct H2cSettings {
    pub endpoints: PrivateEndpoints,
    pub streams_per_connection: usize,
}

impl Default for H2cSettings {
    fn default() -> Self {
        H2cSettings { endpoints: PrivateEndpoints::default(), streams_per_connection: DEFAULT_STREAMS_PER_CONNECTION }
    }
}

impl H2cSettings {
    /// `url` is plain http to a listed endpoint. The origin (`host:port`) it returns keys the
    /// endpoint's connections.
    pub fn origin_of(&self, url: &url::Url) -> Option<String> {
        if url.scheme() != "http" {
            return None;
        }
        let port = url.port_or_known_default()?;
        let listed = match url.host()? {
            url::Host::Domain(name) => self.endpoints.allows_name(name, Some(port)),
            url::Host::Ipv4(ip) => self.endpoints.allows_ip(ip.into(), Some(port)),
            url::Host::Ipv6(ip) => self.endpoints.allows_ip(ip.into(), Some(port)),
        };
        listed.then(|| format!("{}:{port}", url.host_str().unwrap_or_default()))
    }
}

/// The h2c connections of every listed endpoint, shared by every agent that uses one.
#[derive(Debug)]
pub struct H2cPool {
    settings: H2cSettings,
    outbound: OutboundSettings,
    /// Per origin: one client per connection, in the order they were opened.
    lanes: Mutex<HashMap<String, Vec<Lane>>>,
}

#[derive(Debug)]
struct Lane {
    client: reqwest::Client,
    /// Answers streaming on this connection now.
    busy: Arc<AtomicUsize>,
}

/// Holds a place on a connection until the answer's body is dropped.
#[derive(Debug)]
pub struct LaneGuard(Arc<AtomicUsize>);

impl Drop for LaneGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl H2cPool {
    pub fn new(settings: H2cSettings, outbound: OutboundSettings) -> H2cPool {
        H2cPool { settings, outbound, lanes: Mutex::new(HashMap::new()) }
    }

    pub fn settings(&self) -> &H2cSettings {
        &self.settings
    }

    /// The client of the first connection to `origin` with room for one more answer (a new one
    /// when every connection is full), and the guard that keeps the place taken.
    pub fn checkout(&self, origin: &str) -> (reqwest::Client, LaneGuard) {
        let per_connection = self.settings.streams_per_connection.max(1);
        let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
        let lanes = lanes.entry(origin.to_owned()).or_default();
        let index = match lanes.iter().position(|l| l.busy.load(Ordering::Relaxed) < per_connection) {
            Some(index) => index,
            None => {
                lanes.push(Lane { client: client(self.outbound), busy: Arc::default() });
                lanes.len() - 1
            }
        };
        let lane = &lanes[index];
        lane.busy.fetch_add(1, Ordering::Relaxed);
        (lane.client.clone(), LaneGuard(lane.busy.clone()))
    }

    /// The connections (clients) opened to `origin` so far.
    pub fn lanes(&self, origin: &str) -> usize {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner()).get(origin).map_or(0, Vec::len)
    }
}

/// One connection's client: HTTP/2 with prior knowledge, behind the outbound fence. A client's
/// pool keeps one HTTP/2 connection per host and multiplexes every request on it.
fn client(settings: OutboundSettings) -> reqwest::Client {
    let builder = reqwest::Client::builder()
        .http2_prior_knowledge()
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(90))
        // A connection the gateway dropped without a word is noticed while answers wait on it.
        .http2_keep_alive_interval(Duration::from_secs(30))
        .http2_keep_alive_timeout(Duration::from_secs(10))
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(outbound::resolver(settings));
    builder.build().unwrap_or_else(|e| {
        tracing::error!(error = %e, "h2c client; using the default one");
        reqwest::Client::new()
    })
}

/// How a provider's requests leave: the shared client (HTTP/1.1, or HTTP/2 negotiated over
/// TLS), or the h2c connections of a listed endpoint.
#[derive(Clone, Debug)]
pub enum Upstream {
    Shared(reqwest::Client),
    H2c { pool: Arc<H2cPool>, origin: Arc<str> },
}

impl From<reqwest::Client> for Upstream {
    fn from(client: reqwest::Client) -> Self {
        Upstream::Shared(client)
    }
}

impl Upstream {
    /// `base_url` over h2c when the pool lists it, else over `shared`.
    pub fn for_base_url(shared: &reqwest::Client, pool: &Arc<H2cPool>, base_url: &str) -> Upstream {
        // Nothing listed (the default): no address to read on every turn.
        if pool.settings.endpoints == PrivateEndpoints::default() {
            return Upstream::Shared(shared.clone());
        }
        match url::Url::parse(base_url).ok().and_then(|url| pool.settings.origin_of(&url)) {
            Some(origin) => Upstream::H2c { pool: pool.clone(), origin: origin.into() },
            None => Upstream::Shared(shared.clone()),
        }
    }

    /// The client of one request, and its place on an h2c connection if it took one.
    pub fn checkout(&self) -> (reqwest::Client, Option<LaneGuard>) {
        match self {
            Upstream::Shared(client) => (client.clone(), None),
            Upstream::H2c { pool, origin } => {
                let (client, guard) = pool.checkout(origin);
                (client, Some(guard))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(list: &str, per_connection: usize) -> H2cSettings {
        H2cSettings { endpoints: PrivateEndpoints::parse(list).unwrap(), streams_per_connection: per_connection }
    }

    #[test]
    fn only_listed_plain_http_endpoints_use_h2c() {
        let s = settings("127.0.0.1:8080, gateway:9000, 10.0.0.0/8", 100);
        let origin = |u: &str| s.origin_of(&url::Url::parse(u).unwrap());
        assert_eq!(origin("http://127.0.0.1:8080/v1"), Some("127.0.0.1:8080".into()));
        assert_eq!(origin("http://127.0.0.1:8081/v1"), None, "another port");
        assert_eq!(origin("https://127.0.0.1:8080/v1"), None, "TLS negotiates by itself");
        assert_eq!(origin("http://GATEWAY:9000/v1"), Some("gateway:9000".into()));
        assert_eq!(origin("http://10.2.3.4/v1"), Some("10.2.3.4:80".into()), "a range, the default port");
        assert_eq!(origin("http://api.example.com/v1"), None);
        let all = settings("*", 100);
        assert!(all.origin_of(&url::Url::parse("http://anything:1/v1").unwrap()).is_some());
        assert!(H2cSettings::default().origin_of(&url::Url::parse("http://127.0.0.1:8080").unwrap()).is_none());
    }

    #[test]
    fn a_connection_takes_its_share_of_answers_then_another_opens() {
        let pool = Arc::new(H2cPool::new(settings("127.0.0.1:1", 2), OutboundSettings::open()));
        let up = Upstream::for_base_url(&reqwest::Client::new(), &pool, "http://127.0.0.1:1/v1");
        let guards: Vec<_> = (0..5).map(|_| up.checkout().1.expect("h2c")).collect();
        assert_eq!(pool.lanes("127.0.0.1:1"), 3, "2 + 2 + 1");
        drop(guards);
        let again: Vec<_> = (0..4).map(|_| up.checkout().1).collect();
        assert_eq!(pool.lanes("127.0.0.1:1"), 3, "freed places are taken again");
        drop(again);
        let shared = Upstream::for_base_url(&reqwest::Client::new(), &pool, "http://127.0.0.1:2/v1");
        assert!(shared.checkout().1.is_none(), "an unlisted endpoint uses the shared client");
    }
}
