//! Abuse limits of the public API: how often one IP address or one visitor may create visitors,
//! send, upload, resume streams and send lead forms; how many turns one agent may start a
//! minute; how many answer streams may be open at once, in all and per visitor.
//!
//! Rates use `governor` (GCRA: a burst of the per-minute figure, then one every `60 / n` s).
//! Keys are IP addresses and visitor or agent ids hashed into one of [`BUCKETS`] buckets, so a
//! limiter never holds more than that many keys whatever a flood of distinct addresses or
//! visitors does (about 50 bytes each: a few MiB per limiter at worst; a test drives a million
//! addresses through). Two clients sharing a bucket share a limit, rarely with so many buckets.
//! Keys back to full are dropped every [`PRUNE_EVERY`].

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// How often idle keys are dropped.
pub const PRUNE_EVERY: Duration = Duration::from_secs(30);
/// Buckets keys are hashed into: the most keys one limiter can hold.
pub const BUCKETS: u64 = 1 << 16;

/// The figures, all settings (0 turns a rate limit off).
#[derive(Clone, Debug, PartialEq)]
pub struct LimitSettings {
    /// New visitors per IP address per minute.
    pub visitors_per_ip: u32,
    /// Messages per IP address per minute (all its visitors together).
    pub sends_per_ip: u32,
    /// Messages per visitor per minute.
    pub sends_per_visitor: u32,
    /// Image uploads per visitor per minute.
    pub uploads_per_visitor: u32,
    /// Stream resumes (`GET …/events`) per visitor per minute.
    pub resumes_per_visitor: u32,
    /// Lead forms per visitor per hour.
    pub leads_per_visitor_per_hour: u32,
    /// Ratings per visitor per hour.
    pub ratings_per_visitor_per_hour: u32,
    /// Turns an agent may start per minute (all visitors together).
    pub turns_per_agent: u32,
    /// Public reads (an agent's configuration, the embed page) per IP address per minute.
    pub reads_per_ip: u32,
    /// MCP requests per IP address per minute (checked before the token is looked up).
    pub mcp_per_ip: u32,
    /// Typing notices and stops per visitor per minute.
    pub small_calls_per_visitor: u32,
    /// Answer streams open at once on this server.
    pub max_streams: usize,
    /// Answer streams one visitor may hold open at once.
    pub max_streams_per_visitor: usize,
    /// Streams one address (an IPv6 address by its /64) may hold open at once.
    pub max_streams_per_ip: usize,
    /// A resume stream (`GET …/events`) with no event for this long ends (the panel reconnects
    /// with `Last-Event-ID` and loses nothing); zero: never.
    pub resume_idle: Duration,
}

/// Of [`LimitSettings::max_streams`], the share resume streams may fill: the rest is kept for
/// answers, so idle followers can never refuse every new question.
pub const RESUME_SHARE: f64 = 0.75;

/// The kinds of open stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// An answer being written (`POST /api/v1/chat`).
    Answer,
    /// A conversation followed (`GET …/events`).
    Resume,
}

impl LimitSettings {
    /// Every rate and cap off.
    pub fn off() -> Self {
        LimitSettings {
            visitors_per_ip: 0,
            sends_per_ip: 0,
            sends_per_visitor: 0,
            uploads_per_visitor: 0,
            resumes_per_visitor: 0,
            leads_per_visitor_per_hour: 0,
            ratings_per_visitor_per_hour: 0,
            turns_per_agent: 0,
            reads_per_ip: 0,
            mcp_per_ip: 0,
            small_calls_per_visitor: 0,
            max_streams: 0,
            max_streams_per_visitor: 0,
            max_streams_per_ip: 0,
            resume_idle: Duration::ZERO,
        }
    }
}

impl Default for LimitSettings {
    fn default() -> Self {
        LimitSettings {
            visitors_per_ip: 30,
            sends_per_ip: 60,
            sends_per_visitor: 20,
            uploads_per_visitor: 20,
            resumes_per_visitor: 120,
            leads_per_visitor_per_hour: 10,
            ratings_per_visitor_per_hour: 60,
            turns_per_agent: 600,
            reads_per_ip: 600,
            mcp_per_ip: 600,
            small_calls_per_visitor: 60,
            max_streams: 20_000,
            max_streams_per_visitor: 6,
            max_streams_per_ip: 200,
            resume_idle: Duration::from_secs(300),
        }
    }
}

/// What a caller is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    CreateVisitor,
    Send,
    Upload,
    Resume,
    Lead,
    Rate,
    /// A public read: an agent's configuration, the embed page.
    Read,
    /// An MCP request (before its token is looked up).
    Mcp,
    /// A typing notice or a stop.
    SmallCall,
}

/// A refused call: when to try again, and what was limited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub retry_after: Duration,
    pub reason: &'static str,
}

impl Refused {
    /// Whole seconds to wait (at least one), for `Retry-After`.
    pub fn retry_after_secs(&self) -> u64 {
        (self.retry_after.as_secs_f64().ceil() as u64).max(1)
    }
}

/// One keyed rate (keys hashed into [`BUCKETS`]), or none when its figure is 0. Also used for
/// console sign-ins per address ([`crate::auth`]).
pub struct Rate {
    limiter: Option<DefaultKeyedRateLimiter<u64>>,
    reason: &'static str,
}

impl std::fmt::Debug for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rate").field("reason", &self.reason).field("keys", &self.keys()).finish()
    }
}

impl Rate {
    /// `per` calls a `period` (a burst of `per`, then one every `period / per`); 0: no limit.
    pub fn new(per: u32, period: Duration, reason: &'static str) -> Self {
        let limiter = NonZeroU32::new(per).map(|n| {
            let quota = Quota::with_period(period / n.get()).expect("a period over zero").allow_burst(n);
            RateLimiter::keyed(quota)
        });
        Rate { limiter, reason }
    }

    /// Counts a call of `key`, or says when to try again.
    pub fn check(&self, key: impl Hash) -> Result<(), Refused> {
        let Some(limiter) = &self.limiter else { return Ok(()) };
        limiter.check_key(&bucket(key)).map_err(|not_until| Refused {
            retry_after: not_until.wait_time_from(DefaultClock::default().now()),
            reason: self.reason,
        })
    }

    /// Drops keys that are back to full.
    pub fn prune(&self) {
        if let Some(limiter) = &self.limiter {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    /// Keys held now.
    pub fn keys(&self) -> usize {
        self.limiter.as_ref().map_or(0, |l| l.len())
    }
}

/// Every limit of one server.
pub struct Limits {
    settings: LimitSettings,
    visitors_per_ip: Rate,
    sends_per_ip: Rate,
    sends_per_visitor: Rate,
    uploads_per_visitor: Rate,
    resumes_per_visitor: Rate,
    leads_per_visitor: Rate,
    ratings_per_visitor: Rate,
    turns_per_agent: Rate,
    reads_per_ip: Rate,
    mcp_per_ip: Rate,
    small_calls_per_visitor: Rate,
    streams: Arc<Streams>,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits").field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// A minute, the period of most rates.
pub const MINUTE: Duration = Duration::from_secs(60);

impl Limits {
    /// Drops keys back to full every [`PRUNE_EVERY`], until the limits are dropped.
    pub fn spawn_pruner(self: &Arc<Self>) {
        let limits = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(PRUNE_EVERY);
            loop {
                tick.tick().await;
                match limits.upgrade() {
                    Some(limits) => limits.prune(),
                    None => break,
                }
            }
        });
    }

    pub fn new(settings: LimitSettings) -> Self {
        let s = &settings;
        Limits {
            visitors_per_ip: Rate::new(s.visitors_per_ip, MINUTE, "new visitors from this address"),
            sends_per_ip: Rate::new(s.sends_per_ip, MINUTE, "messages from this address"),
            sends_per_visitor: Rate::new(s.sends_per_visitor, MINUTE, "messages"),
            uploads_per_visitor: Rate::new(s.uploads_per_visitor, MINUTE, "image uploads"),
            resumes_per_visitor: Rate::new(s.resumes_per_visitor, MINUTE, "stream resumes"),
            leads_per_visitor: Rate::new(s.leads_per_visitor_per_hour, MINUTE * 60, "contact forms"),
            ratings_per_visitor: Rate::new(s.ratings_per_visitor_per_hour, MINUTE * 60, "ratings"),
            turns_per_agent: Rate::new(s.turns_per_agent, MINUTE, "answers of this assistant"),
            reads_per_ip: Rate::new(s.reads_per_ip, MINUTE, "requests from this address"),
            mcp_per_ip: Rate::new(s.mcp_per_ip, MINUTE, "MCP requests from this address"),
            small_calls_per_visitor: Rate::new(s.small_calls_per_visitor, MINUTE, "typing notices and stops"),
            streams: Arc::new(Streams::default()),
            settings,
        }
    }

    /// The figures in force.
    pub fn settings(&self) -> &LimitSettings {
        &self.settings
    }

    /// Counts one `action` of `ip` (and of `visitor`, when known), or says when to try again.
    /// The address is counted first, so a refused address does not use up its visitors' rates.
    pub fn check(&self, action: Action, ip: IpAddr, visitor: Option<&str>) -> Result<(), Refused> {
        match action {
            Action::CreateVisitor => self.visitors_per_ip.check(ip),
            Action::Send => {
                self.sends_per_ip.check(ip)?;
                visitor.map_or(Ok(()), |v| self.sends_per_visitor.check(v))
            }
            Action::Upload => visitor.map_or(Ok(()), |v| self.uploads_per_visitor.check(v)),
            Action::Resume => visitor.map_or(Ok(()), |v| self.resumes_per_visitor.check(v)),
            Action::Lead => visitor.map_or(Ok(()), |v| self.leads_per_visitor.check(v)),
            Action::Rate => visitor.map_or(Ok(()), |v| self.ratings_per_visitor.check(v)),
            Action::Read => self.reads_per_ip.check(ip),
            Action::Mcp => self.mcp_per_ip.check(ip),
            Action::SmallCall => visitor.map_or(Ok(()), |v| self.small_calls_per_visitor.check(v)),
        }
    }

    /// Counts a turn of the agent `agent_id`.
    pub fn turn(&self, agent_id: &str) -> Result<(), Refused> {
        self.turns_per_agent.check(agent_id)
    }

    /// Room for one more open stream of `visitor` at `ip`, held until the permit is dropped:
    /// within the visitor's and the address's caps and the server's, of which resume streams
    /// may fill [`RESUME_SHARE`] only.
    pub fn stream(&self, kind: StreamKind, visitor: &str, ip: IpAddr) -> Result<StreamPermit, Refused> {
        self.streams.acquire(kind, visitor, &crate::net::address_group(ip), &self.settings)
    }

    /// Drops keys that are back to full (called every [`PRUNE_EVERY`]).
    pub fn prune(&self) {
        self.visitors_per_ip.prune();
        self.sends_per_ip.prune();
        self.sends_per_visitor.prune();
        self.uploads_per_visitor.prune();
        self.resumes_per_visitor.prune();
        self.leads_per_visitor.prune();
        self.ratings_per_visitor.prune();
        self.turns_per_agent.prune();
        self.reads_per_ip.prune();
        self.mcp_per_ip.prune();
        self.small_calls_per_visitor.prune();
    }

    /// Keys held by all the limiters together (for tests and metrics).
    pub fn keys(&self) -> usize {
        self.visitors_per_ip.keys()
            + self.sends_per_ip.keys()
            + self.sends_per_visitor.keys()
            + self.uploads_per_visitor.keys()
            + self.resumes_per_visitor.keys()
            + self.leads_per_visitor.keys()
            + self.ratings_per_visitor.keys()
            + self.turns_per_agent.keys()
            + self.reads_per_ip.keys()
            + self.mcp_per_ip.keys()
            + self.small_calls_per_visitor.keys()
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.total.load(Ordering::SeqCst)
    }
}

/// The bucket of a key (an address or an id).
fn bucket(key: impl Hash) -> u64 {
    key_of(key) % BUCKETS
}

fn key_of(key: impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

#[derive(Default)]
struct Streams {
    total: AtomicUsize,
    counts: Mutex<Counts>,
}

/// Open streams by visitor, by address, and resumes in all (under one lock).
#[derive(Default)]
struct Counts {
    per_visitor: HashMap<u64, usize>,
    per_ip: HashMap<u64, usize>,
    resumes: usize,
}

fn decrement(map: &mut HashMap<u64, usize>, key: u64) {
    if let Some(n) = map.get_mut(&key) {
        *n -= 1;
        if *n == 0 {
            map.remove(&key);
        }
    }
}

impl Streams {
    fn acquire(
        self: &Arc<Self>,
        kind: StreamKind,
        visitor: &str,
        address: &str,
        s: &LimitSettings,
    ) -> Result<StreamPermit, Refused> {
        let refused = |reason| Refused { retry_after: Duration::from_secs(5), reason };
        let (visitor, ip) = (key_of(visitor), key_of(address));
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let mine = counts.per_visitor.get(&visitor).copied().unwrap_or(0);
        if s.max_streams_per_visitor > 0 && mine >= s.max_streams_per_visitor {
            return Err(refused("open streams of this visitor"));
        }
        let from_ip = counts.per_ip.get(&ip).copied().unwrap_or(0);
        if s.max_streams_per_ip > 0 && from_ip >= s.max_streams_per_ip {
            return Err(refused("open streams from this address"));
        }
        if s.max_streams > 0 && self.total.load(Ordering::SeqCst) >= s.max_streams {
            return Err(refused("open streams on this server"));
        }
        let resume_room = (s.max_streams as f64 * RESUME_SHARE) as usize;
        if kind == StreamKind::Resume && s.max_streams > 0 && counts.resumes >= resume_room {
            return Err(refused("conversations followed on this server"));
        }
        self.total.fetch_add(1, Ordering::SeqCst);
        counts.per_visitor.insert(visitor, mine + 1);
        counts.per_ip.insert(ip, from_ip + 1);
        if kind == StreamKind::Resume {
            counts.resumes += 1;
        }
        Ok(StreamPermit { streams: self.clone(), kind, visitor, ip })
    }
}

/// One open stream; dropping it frees the room.
pub struct StreamPermit {
    streams: Arc<Streams>,
    kind: StreamKind,
    visitor: u64,
    ip: u64,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        self.streams.total.fetch_sub(1, Ordering::SeqCst);
        let mut counts = self.streams.counts.lock().unwrap_or_else(|p| p.into_inner());
        decrement(&mut counts.per_visitor, self.visitor);
        decrement(&mut counts.per_ip, self.ip);
        if self.kind == StreamKind::Resume {
            counts.resumes -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(n.to_be_bytes())
    }

    #[test]
    fn a_burst_past_the_figure_is_refused_with_a_wait() {
        let limits = Limits::new(LimitSettings { sends_per_visitor: 3, ..LimitSettings::default() });
        for _ in 0..3 {
            limits.check(Action::Send, ip(1), Some("v1")).expect("within the figure");
        }
        let refused = limits.check(Action::Send, ip(1), Some("v1")).expect_err("over");
        assert_eq!(refused.reason, "messages");
        assert!(refused.retry_after > Duration::ZERO && refused.retry_after <= Duration::from_secs(20));
        assert!(refused.retry_after_secs() >= 1);
        // Another visitor is still served.
        limits.check(Action::Send, ip(1), Some("v2")).expect("another visitor");
    }

    #[test]
    fn an_address_is_limited_across_its_visitors() {
        let limits = Limits::new(LimitSettings { sends_per_ip: 2, ..LimitSettings::default() });
        limits.check(Action::Send, ip(7), Some("a")).expect("one");
        limits.check(Action::Send, ip(7), Some("b")).expect("two");
        assert_eq!(
            limits.check(Action::Send, ip(7), Some("c")).expect_err("three").reason,
            "messages from this address"
        );
        limits.check(Action::Send, ip(8), Some("c")).expect("another address");
    }

    #[test]
    fn zero_turns_a_rate_off() {
        let limits = Limits::new(LimitSettings { visitors_per_ip: 0, ..LimitSettings::default() });
        for _ in 0..1000 {
            limits.check(Action::CreateVisitor, ip(1), None).expect("no limit");
        }
    }

    #[test]
    fn streams_are_capped_per_visitor_and_in_all_and_freed_on_drop() {
        let limits =
            Limits::new(LimitSettings { max_streams: 3, max_streams_per_visitor: 2, ..LimitSettings::default() });
        let ip = |n: u8| IpAddr::from([198, 51, 100, n]);
        let answer = |v: &str, n: u8| limits.stream(StreamKind::Answer, v, ip(n));
        let a1 = answer("a", 1).expect("a1");
        let _a2 = answer("a", 1).expect("a2");
        assert!(answer("a", 2).is_err(), "a third stream of one visitor");
        let _b1 = answer("b", 2).expect("b1");
        assert!(answer("c", 3).is_err(), "past the server's cap");
        drop(a1);
        assert_eq!(limits.open_streams(), 2);
        answer("c", 3).expect("room again");
    }

    #[test]
    fn addresses_have_a_cap_and_followers_leave_room_for_answers() {
        let limits = Limits::new(LimitSettings {
            max_streams: 8,
            max_streams_per_visitor: 2,
            max_streams_per_ip: 3,
            ..LimitSettings::default()
        });
        let v6 = |last: u16| IpAddr::from([0x2001, 0xdb8, 0, 7, 0, 0, 0, last]);
        let mut held = Vec::new();
        for v in ["a", "b", "c"] {
            held.push(
                limits.stream(StreamKind::Resume, v, v6(u16::from(v.as_bytes()[0]))).expect("within the /64's cap"),
            );
        }
        assert!(limits.stream(StreamKind::Resume, "d", v6(99)).is_err(), "a fourth from one /64");
        // Followers fill 6 of 8 (75 %) at most; answers still get the rest.
        for (v, n) in [("e", 1u8), ("f", 2), ("g", 3)] {
            held.push(limits.stream(StreamKind::Resume, v, IpAddr::from([203, 0, 113, n])).expect("room to follow"));
        }
        assert!(limits.stream(StreamKind::Resume, "h", IpAddr::from([203, 0, 113, 9])).is_err(), "followers' share");
        held.push(limits.stream(StreamKind::Answer, "h", IpAddr::from([203, 0, 113, 9])).expect("an answer"));
        held.push(limits.stream(StreamKind::Answer, "i", IpAddr::from([203, 0, 113, 10])).expect("an answer"));
        assert_eq!(limits.open_streams(), 8);
        held.clear();
        assert_eq!(limits.open_streams(), 0);
        limits.stream(StreamKind::Resume, "d", v6(99)).expect("all freed");
    }

    #[test]
    fn a_million_addresses_leave_bounded_keys() {
        let limits = Limits::new(LimitSettings::default());
        for n in 0..1_000_000u32 {
            let _ = limits.check(Action::CreateVisitor, ip(n), None);
        }
        // None is back to full yet (nothing can be pruned): the buckets are the bound.
        assert!(limits.keys() <= BUCKETS as usize, "{} keys", limits.keys());
        assert!(limits.keys() > BUCKETS as usize / 2, "the addresses spread over the buckets");
    }
}
