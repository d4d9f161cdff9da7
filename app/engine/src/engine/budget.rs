//! Spending guards: a conversation's budget, an agent's daily cap, a visitor's daily cap
//! (across all their conversations) and an address's daily cap (every visitor from one IPv4
//! address or IPv6 /64: visitor tokens are free, so one client could otherwise spend a visitor
//! cap per token). Every model call (the coordinator's and its experts') first
//! takes a [`Hold`] — room for its expected cost, taken under a lock, so calls started at the
//! same moment cannot together spend past a limit — and settles it with the real cost once the
//! call's usage is known.
//!
//! Where the daily totals live depends on the database. On SQLite (one process per database)
//! they are loaded from the usage ledger on first use each UTC day and kept in memory, so a hold
//! costs no database round trip. On PostgreSQL, where replicas share the database, they live in
//! the database ([`crate::store::spend`]): room is taken with a conditional update that
//! one replica at a time can make, and a call's cost is added in its ledger row's transaction.
//! On SQLite an address's day is held in memory like the others, and its cost is also added to
//! its `spend_days` row with each ledger row (the ledger does not record addresses), where the
//! next start reads it back.

mod charge;
mod rows;

pub use charge::Charge;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::hub::Lease;
use crate::store::spend::{self, SpendSettle};
use crate::store::usage::Spender;
use crate::store::{Db, DbError};

/// A UTC day, in milliseconds (daily caps run from midnight UTC).
pub const DAY_MS: i64 = 86_400_000;
/// Days kept in memory before old ones are dropped (visitors come and go).
pub(super) const MAX_DAYS_KEPT: usize = 200_000;

/// What every answer may spend and take, whatever its agent says.
#[derive(Clone, Debug)]
pub struct SpendSettings {
    /// What a model without a price row is charged, US dollars per million tokens.
    pub unpriced_input_per_mtok: f64,
    pub unpriced_output_per_mtok: f64,
    /// `max_tokens` of every answer's model calls, for agents that set none (seed 003: 4,096).
    pub answer_max_tokens: u32,
    /// How long one answer (all its model calls and tools) may take.
    pub answer_time_limit: Duration,
    /// An agent's spend per UTC day when the agent sets no cap of its own; `None`: no cap.
    pub agent_daily_cap_usd: Option<f64>,
    /// A visitor's spend per UTC day across all conversations; `None`: no cap.
    pub visitor_daily_cap_usd: Option<f64>,
    /// The spend per UTC day of every visitor from one address (IPv6 by /64); `None`: no cap.
    pub address_daily_cap_usd: Option<f64>,
}

impl Default for SpendSettings {
    fn default() -> Self {
        SpendSettings {
            unpriced_input_per_mtok: super::pricing::DEFAULT_INPUT_PER_MTOK,
            unpriced_output_per_mtok: super::pricing::DEFAULT_OUTPUT_PER_MTOK,
            answer_max_tokens: 4096,
            answer_time_limit: Duration::from_secs(120),
            agent_daily_cap_usd: Some(10.0),
            visitor_daily_cap_usd: Some(1.0),
            address_daily_cap_usd: Some(5.0),
        }
    }
}

/// Which limit stopped a call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LimitHit {
    /// The conversation's budget (`BUDGET_EXCEEDED`).
    Conversation { spent_usd: f64, budget_usd: f64 },
    /// The agent's spend for today (`BUDGET_EXCEEDED` too; the console tells them apart).
    AgentDaily { spent_usd: f64, cap_usd: f64 },
    /// The visitor's spend for today, all conversations together (`BUDGET_EXCEEDED`).
    VisitorDaily { spent_usd: f64, cap_usd: f64 },
    /// The spend for today of every visitor from the sender's address (`BUDGET_EXCEEDED`).
    AddressDaily { spent_usd: f64, cap_usd: f64 },
}

impl LimitHit {
    /// `who`'s daily cap reached.
    fn daily(who: &Spender, spent_usd: f64, cap_usd: f64) -> LimitHit {
        match who {
            Spender::Agent(_) => LimitHit::AgentDaily { spent_usd, cap_usd },
            Spender::Visitor(_) => LimitHit::VisitorDaily { spent_usd, cap_usd },
            Spender::Address(_) => LimitHit::AddressDaily { spent_usd, cap_usd },
        }
    }
}

#[derive(Debug)]
struct Day {
    day: i64,
    spent: f64,
    held: f64,
}

impl Day {
    /// Takes room for `estimate` unless the cap is reached; the first call of a day may always go
    /// while nothing is held (it cannot know its cost before it is made).
    fn take(&mut self, cap: f64, estimate: f64) -> bool {
        if self.spent >= cap || (self.held > 0.0 && self.spent + self.held + estimate > cap) {
            return false;
        }
        self.held += estimate;
        true
    }
}

/// Today's spend of each agent and visitor: in this process's memory ([`Budgets::default`], one
/// process on SQLite) or in the database ([`Budgets::shared`], replicas on PostgreSQL).
#[derive(Clone, Debug, Default)]
pub struct Budgets {
    days: Arc<Mutex<HashMap<Spender, Day>>>,
    /// The `(spender, day)` rows of `spend_days` known to exist, when the totals live there.
    known: Arc<Mutex<KnownDays>>,
    /// The totals live in the database.
    shared: bool,
}

/// `(spender key, day)` rows of `spend_days` known to exist.
type KnownDays = HashSet<(String, i64)>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a call may spend, and where.
pub struct Limits<'a> {
    pub agent_id: &'a str,
    pub visitor_id: &'a str,
    pub budget_usd: f64,
    pub daily_cap_usd: Option<f64>,
    pub visitor_daily_cap_usd: Option<f64>,
    /// The sender's address group (empty: not known, no cap) and its cap.
    pub address: &'a str,
    pub address_daily_cap_usd: Option<f64>,
    /// The least a call of this model is expected to cost.
    pub floor_usd: f64,
    pub now_ms: i64,
}

impl Budgets {
    /// Daily totals kept in the database, shared with every process on it (replicas).
    pub fn shared() -> Self {
        Budgets { days: Arc::default(), known: Arc::default(), shared: true }
    }

    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// Loads a spender's spend for today from the ledger unless it is known.
    async fn ensure_day(&self, db: &Db, who: &Spender, day: i64) -> Result<(), DbError> {
        if lock(&self.days).get(who).is_some_and(|d| d.day == day) {
            return Ok(());
        }
        let spent = match who {
            // Not in the ledger: its day row (made here once a day) holds what was spent, so a
            // restart does not give the address a fresh allowance.
            Spender::Address(_) => {
                spend::ensure_day(db, who, day, day * DAY_MS).await?;
                spend::spent(db, &spend::key(who), day).await?.unwrap_or(0.0)
            }
            _ => crate::store::usage::spend_since(db, who, day * DAY_MS).await?,
        };
        let mut map = lock(&self.days);
        if map.len() >= MAX_DAYS_KEPT {
            // Earlier days are never read again; today's held room must stay.
            map.retain(|_, d| d.day == day && d.held > 0.0);
        }
        match map.get(who) {
            Some(d) if d.day == day => {}
            _ => {
                map.insert(who.clone(), Day { day, spent, held: 0.0 });
            }
        }
        Ok(())
    }

    /// Holds room for one call in the address's, the agent's and the visitor's day and the
    /// conversation's budget, in this order (always), or says which limit is reached.
    pub async fn hold(&self, db: &Db, lease: &Lease, limits: Limits<'_>) -> Result<Result<Hold, LimitHit>, DbError> {
        let day = limits.now_ms.div_euclid(DAY_MS);
        let caps: Vec<(Spender, f64)> = [
            (
                Spender::Address(limits.address.to_owned()),
                limits.address_daily_cap_usd.filter(|_| !limits.address.is_empty()),
            ),
            (Spender::Agent(limits.agent_id.to_owned()), limits.daily_cap_usd),
            (
                Spender::Visitor(limits.visitor_id.to_owned()),
                limits.visitor_daily_cap_usd.filter(|_| !limits.visitor_id.is_empty()),
            ),
        ]
        .into_iter()
        .filter_map(|(who, cap)| cap.map(|c| (who, c)))
        .collect();
        let estimate = limits.floor_usd;
        if self.shared {
            return self.hold_shared(db, lease, &limits, day, caps).await;
        }
        // In memory too for the address: no database round trip per call; the address's row gets
        // each call's cost with its ledger row (see `Hold::shared_settles`).
        for (who, _) in &caps {
            self.ensure_day(db, who, day).await?;
        }
        let mut map = lock(&self.days);
        let mut taken: Vec<Spender> = Vec::new();
        let mut hit = None;
        for (who, cap) in &caps {
            let Some(d) = map.get_mut(who) else { continue };
            if d.take(*cap, estimate) {
                taken.push(who.clone());
            } else {
                hit = Some(LimitHit::daily(who, d.spent, *cap));
                break;
            }
        }
        if hit.is_none() {
            match lease.hold_cost(limits.budget_usd, limits.floor_usd) {
                Ok(held) => {
                    let persisted = taken.iter().filter(|w| matches!(w, Spender::Address(_))).map(spend::key).collect();
                    return Ok(Ok(Hold {
                        budgets: self.clone(),
                        lease: lease.clone(),
                        days: taken,
                        shared: None,
                        persisted,
                        day,
                        day_held: estimate,
                        held,
                        done: false,
                    }));
                }
                Err(spent) => hit = Some(LimitHit::Conversation { spent_usd: spent, budget_usd: limits.budget_usd }),
            }
        }
        for who in taken {
            if let Some(d) = map.get_mut(&who) {
                d.held = (d.held - estimate).max(0.0);
            }
        }
        Ok(Err(hit.expect("a limit was hit")))
    }

    /// [`Budgets::hold`] with the daily totals in the database: the room is taken in each
    /// capped day with one conditional update (the database orders callers from any replica).
    async fn hold_shared(
        &self,
        db: &Db,
        lease: &Lease,
        limits: &Limits<'_>,
        day: i64,
        caps: Vec<(Spender, f64)>,
    ) -> Result<Result<Hold, LimitHit>, DbError> {
        let estimate = limits.floor_usd;
        let mut taken: Vec<String> = Vec::new();
        let mut hit = None;
        let mut failed = None;
        for (who, cap) in &caps {
            match rows::take(db, &self.known, who, *cap, day, estimate).await {
                Ok(Ok(key)) => taken.push(key),
                Ok(Err(limit)) => {
                    hit = Some(limit);
                    break;
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if hit.is_none() && failed.is_none() {
            match lease.hold_cost(limits.budget_usd, limits.floor_usd) {
                Ok(held) => {
                    return Ok(Ok(Hold {
                        budgets: self.clone(),
                        lease: lease.clone(),
                        days: Vec::new(),
                        shared: Some((db.clone(), taken)),
                        persisted: Vec::new(),
                        day,
                        day_held: estimate,
                        held,
                        done: false,
                    }));
                }
                Err(spent) => hit = Some(LimitHit::Conversation { spent_usd: spent, budget_usd: limits.budget_usd }),
            }
        }
        rows::release(db, &taken, day, estimate).await;
        match failed {
            Some(e) => Err(e),
            None => Ok(Err(hit.expect("a limit was hit"))),
        }
    }

    fn settle(&self, days: &[Spender], day: i64, held: f64, cost: f64) {
        let mut map = lock(&self.days);
        for who in days {
            if let Some(d) = map.get_mut(who)
                && d.day == day
            {
                d.held = (d.held - held).max(0.0);
                d.spent += cost;
            }
        }
    }

    /// An agent's spend on the day of `now_ms`, as far as its cap knows it (`None`: not loaded
    /// yet, no call was capped that day). With shared totals, the calls other replicas made count.
    pub async fn spent_today(&self, db: &Db, agent_id: &str, now_ms: i64) -> Result<Option<f64>, DbError> {
        let who = Spender::Agent(agent_id.to_owned());
        let day = now_ms.div_euclid(DAY_MS);
        if self.shared {
            return spend::spent(db, &spend::key(&who), day).await;
        }
        Ok(lock(&self.days).get(&who).filter(|d| d.day == day).map(|d| d.spent))
    }
}

/// Room held for one call; released if dropped unsettled (the call never happened).
pub struct Hold {
    budgets: Budgets,
    lease: Lease,
    /// The days room was taken in (capped ones only), in memory.
    days: Vec<Spender>,
    /// With shared totals: the database and the day rows room was taken in.
    shared: Option<(Db, Vec<String>)>,
    /// With totals in memory: the day rows that get the call's cost too (the address's, which
    /// the ledger cannot rebuild), no room having been taken there.
    persisted: Vec<String>,
    day: i64,
    day_held: f64,
    held: f64,
    done: bool,
}

impl Hold {
    /// What settling the call at `cost_usd` changes in the database's day rows; the stream
    /// writer applies it with the call's ledger row ([`crate::store::usage::UsageRecord::settles`]).
    /// With totals in memory only the address's row gets the cost (nothing was held there).
    pub fn shared_settles(&self, cost_usd: f64) -> Vec<SpendSettle> {
        let settle =
            |key: &String, release_usd: f64| SpendSettle { spender: key.clone(), day: self.day, cost_usd, release_usd };
        match &self.shared {
            Some((_, keys)) => keys.iter().map(|key| settle(key, self.day_held)).collect(),
            None => self.persisted.iter().map(|key| settle(key, 0.0)).collect(),
        }
    }

    /// Replaces the hold by the call's cost; returns the conversation's total. With shared
    /// totals the database's part comes with the ledger row ([`Hold::shared_settles`]).
    pub fn settle(mut self, cost_usd: f64) -> f64 {
        self.done = true;
        self.budgets.settle(&self.days, self.day, self.day_held, cost_usd);
        self.lease.settle_cost(self.held, cost_usd)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if !self.done {
            self.budgets.settle(&self.days, self.day, self.day_held, 0.0);
            self.lease.settle_cost(self.held, 0.0);
            // The call was not made: the room goes back (in the background; Drop cannot wait).
            if let Some((db, keys)) = self.shared.take().filter(|(_, keys)| !keys.is_empty())
                && let Ok(runtime) = tokio::runtime::Handle::try_current()
            {
                let (day, amount) = (self.day, self.day_held);
                runtime.spawn(async move {
                    for key in &keys {
                        if let Err(e) = spend::release(&db, key, day, amount).await {
                            tracing::warn!(error = %e, spender = %key, "could not give back budget room");
                        }
                    }
                });
            }
        }
    }
}
