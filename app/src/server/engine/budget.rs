//! Spending guards: a conversation's budget and an agent's daily cap. Every model call (the
//! coordinator's and its experts') first takes a [`Hold`] — room for its expected cost, taken
//! under a lock, so calls started at the same moment cannot together spend past a limit — and
//! settles it with the real cost once the call's usage is known. The daily totals are loaded from
//! the usage ledger on first use each UTC day and kept in memory (per process).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::hub::Lease;
use crate::server::store::{Db, DbError};

const DAY_MS: i64 = 86_400_000;

/// Which limit stopped a call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LimitHit {
    /// The conversation's budget (`BUDGET_EXCEEDED`).
    Conversation { spent_usd: f64, budget_usd: f64 },
    /// The agent's spend for today (`BUDGET_EXCEEDED` too; the console tells them apart).
    AgentDaily { spent_usd: f64, cap_usd: f64 },
}

#[derive(Debug)]
struct AgentDay {
    day: i64,
    spent: f64,
    held: f64,
}

/// Today's spend of each agent.
#[derive(Clone, Debug, Default)]
pub struct Budgets(Arc<Mutex<HashMap<String, AgentDay>>>);

fn lock(m: &Mutex<HashMap<String, AgentDay>>) -> std::sync::MutexGuard<'_, HashMap<String, AgentDay>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a call may spend, and where.
pub struct Limits<'a> {
    pub agent_id: &'a str,
    pub budget_usd: f64,
    pub daily_cap_usd: Option<f64>,
    /// The least a call of this model is expected to cost.
    pub floor_usd: f64,
    pub now_ms: i64,
}

impl Budgets {
    /// Loads the agent's spend for today from the ledger unless it is known.
    async fn ensure_day(&self, db: &Db, agent_id: &str, day: i64) -> Result<(), DbError> {
        if lock(&self.0).get(agent_id).is_some_and(|d| d.day == day) {
            return Ok(());
        }
        let spent = crate::server::store::usage::agent_spend_since(db, agent_id, day * DAY_MS).await?;
        let mut map = lock(&self.0);
        match map.get(agent_id) {
            Some(d) if d.day == day => {}
            _ => {
                map.insert(agent_id.to_owned(), AgentDay { day, spent, held: 0.0 });
            }
        }
        Ok(())
    }

    /// Holds room for one call in the conversation's budget and the agent's daily cap.
    pub async fn hold(&self, db: &Db, lease: &Lease, limits: Limits<'_>) -> Result<Result<Hold, LimitHit>, DbError> {
        let day = limits.now_ms.div_euclid(DAY_MS);
        if limits.daily_cap_usd.is_some() {
            self.ensure_day(db, limits.agent_id, day).await?;
        }
        // The agent's day first, then the conversation: always in this order.
        let mut map = lock(&self.0);
        let mut agent_held = 0.0;
        if let Some(cap) = limits.daily_cap_usd
            && let Some(d) = map.get_mut(limits.agent_id)
        {
            let estimate = limits.floor_usd;
            if d.spent >= cap || (d.held > 0.0 && d.spent + d.held + estimate > cap) {
                return Ok(Err(LimitHit::AgentDaily { spent_usd: d.spent, cap_usd: cap }));
            }
            d.held += estimate;
            agent_held = estimate;
        }
        match lease.hold_cost(limits.budget_usd, limits.floor_usd) {
            Ok(held) => Ok(Ok(Hold {
                budgets: self.clone(),
                lease: lease.clone(),
                agent_id: limits.agent_id.to_owned(),
                day,
                agent_held,
                held,
                done: false,
            })),
            Err(spent) => {
                if let Some(d) = map.get_mut(limits.agent_id) {
                    d.held = (d.held - agent_held).max(0.0);
                }
                Ok(Err(LimitHit::Conversation { spent_usd: spent, budget_usd: limits.budget_usd }))
            }
        }
    }

    fn settle(&self, agent_id: &str, day: i64, held: f64, cost: f64) {
        let mut map = lock(&self.0);
        if let Some(d) = map.get_mut(agent_id)
            && d.day == day
        {
            d.held = (d.held - held).max(0.0);
            d.spent += cost;
        }
    }

    /// Today's known spend of an agent (the console, tests).
    pub fn spent_today(&self, agent_id: &str) -> Option<f64> {
        lock(&self.0).get(agent_id).map(|d| d.spent)
    }
}

/// Room held for one call; released if dropped unsettled (the call never happened).
pub struct Hold {
    budgets: Budgets,
    lease: Lease,
    agent_id: String,
    day: i64,
    agent_held: f64,
    held: f64,
    done: bool,
}

impl Hold {
    /// Replaces the hold by the call's cost; returns the conversation's total.
    pub fn settle(mut self, cost_usd: f64) -> f64 {
        self.done = true;
        self.budgets.settle(&self.agent_id, self.day, self.agent_held, cost_usd);
        self.lease.settle_cost(self.held, cost_usd)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if !self.done {
            self.budgets.settle(&self.agent_id, self.day, self.agent_held, 0.0);
            self.lease.settle_cost(self.held, 0.0);
        }
    }
}
