//! Spending guards: a conversation's budget, an agent's daily cap and a visitor's daily cap
//! (across all their conversations). Every model call (the coordinator's and its experts') first
//! takes a [`Hold`] — room for its expected cost, taken under a lock, so calls started at the
//! same moment cannot together spend past a limit — and settles it with the real cost once the
//! call's usage is known. The daily totals are loaded from the usage ledger on first use each UTC
//! day and kept in memory (per process).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::hub::Lease;
use crate::server::store::usage::Spender;
use crate::server::store::{Db, DbError};

const DAY_MS: i64 = 86_400_000;
/// Days kept in memory before old ones are dropped (visitors come and go).
const MAX_DAYS_KEPT: usize = 200_000;

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

/// Today's spend of each agent and visitor.
#[derive(Clone, Debug, Default)]
pub struct Budgets(Arc<Mutex<HashMap<Spender, Day>>>);

fn lock(m: &Mutex<HashMap<Spender, Day>>) -> std::sync::MutexGuard<'_, HashMap<Spender, Day>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a call may spend, and where.
pub struct Limits<'a> {
    pub agent_id: &'a str,
    pub visitor_id: &'a str,
    pub budget_usd: f64,
    pub daily_cap_usd: Option<f64>,
    pub visitor_daily_cap_usd: Option<f64>,
    /// The least a call of this model is expected to cost.
    pub floor_usd: f64,
    pub now_ms: i64,
}

impl Budgets {
    /// Loads a spender's spend for today from the ledger unless it is known.
    async fn ensure_day(&self, db: &Db, who: &Spender, day: i64) -> Result<(), DbError> {
        if lock(&self.0).get(who).is_some_and(|d| d.day == day) {
            return Ok(());
        }
        let spent = crate::server::store::usage::spend_since(db, who, day * DAY_MS).await?;
        let mut map = lock(&self.0);
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

    /// Holds room for one call in the agent's and the visitor's day and the conversation's
    /// budget, in this order (always), or says which limit is reached.
    pub async fn hold(&self, db: &Db, lease: &Lease, limits: Limits<'_>) -> Result<Result<Hold, LimitHit>, DbError> {
        let day = limits.now_ms.div_euclid(DAY_MS);
        let agent = Spender::Agent(limits.agent_id.to_owned());
        let visitor = Spender::Visitor(limits.visitor_id.to_owned());
        let caps: Vec<(Spender, f64)> = [
            (agent, limits.daily_cap_usd),
            (visitor, limits.visitor_daily_cap_usd.filter(|_| !limits.visitor_id.is_empty())),
        ]
        .into_iter()
        .filter_map(|(who, cap)| cap.map(|c| (who, c)))
        .collect();
        for (who, _) in &caps {
            self.ensure_day(db, who, day).await?;
        }
        let estimate = limits.floor_usd;
        let mut map = lock(&self.0);
        let mut taken: Vec<Spender> = Vec::new();
        let mut hit = None;
        for (who, cap) in &caps {
            let Some(d) = map.get_mut(who) else { continue };
            if d.take(*cap, estimate) {
                taken.push(who.clone());
            } else {
                hit = Some(match who {
                    Spender::Agent(_) => LimitHit::AgentDaily { spent_usd: d.spent, cap_usd: *cap },
                    Spender::Visitor(_) => LimitHit::VisitorDaily { spent_usd: d.spent, cap_usd: *cap },
                });
                break;
            }
        }
        if hit.is_none() {
            match lease.hold_cost(limits.budget_usd, limits.floor_usd) {
                Ok(held) => {
                    return Ok(Ok(Hold {
                        budgets: self.clone(),
                        lease: lease.clone(),
                        days: taken,
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

    fn settle(&self, days: &[Spender], day: i64, held: f64, cost: f64) {
        let mut map = lock(&self.0);
        for who in days {
            if let Some(d) = map.get_mut(who)
                && d.day == day
            {
                d.held = (d.held - held).max(0.0);
                d.spent += cost;
            }
        }
    }

    /// Today's known spend of an agent (the console, tests).
    pub fn spent_today(&self, agent_id: &str) -> Option<f64> {
        lock(&self.0).get(&Spender::Agent(agent_id.to_owned())).map(|d| d.spent)
    }
}

/// Room held for one call; released if dropped unsettled (the call never happened).
pub struct Hold {
    budgets: Budgets,
    lease: Lease,
    /// The days room was taken in (capped ones only).
    days: Vec<Spender>,
    day: i64,
    day_held: f64,
    held: f64,
    done: bool,
}

impl Hold {
    /// Replaces the hold by the call's cost; returns the conversation's total.
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
        }
    }
}
