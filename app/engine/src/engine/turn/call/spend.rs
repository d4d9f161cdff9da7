//! What a model call may spend: the room it holds under the conversation's budget and the daily
//! caps before it starts (its worst case), and the alert when a cap is reached.

use super::super::super::budget::{Hold, LimitHit, Limits};
use super::super::Stop;
use super::{Caller, DEFAULT_MAX_TOKENS};
use crate::engine::provider::ModelRequest;
use parley_protocol::StreamCode;

/// An alert raised by this process: agent, kind, UTC day.
type Raised = (String, &'static str, i64);

impl Caller<'_> {
    /// Raises an alert for the agent (once a day: the mail to administrators and the webhook
    /// event), in the background so the visitor's answer does not wait for it.
    pub(super) fn alert(&self, kind: &'static str, detail: String, data: serde_json::Value) {
        let (db, agent_id, now) = (self.ctx.db.clone(), self.ctx.agent.id.clone(), self.ctx.clock.now_ms());
        // Raised here already today: a refused call after another does not write again.
        static RAISED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashSet<Raised>>> =
            std::sync::LazyLock::new(Default::default);
        let day = now.div_euclid(86_400_000);
        {
            let mut raised = RAISED.lock().unwrap_or_else(|p| p.into_inner());
            raised.retain(|(_, _, d)| *d >= day);
            if !raised.insert((agent_id.clone(), kind, day)) {
                return;
            }
        }
        tokio::spawn(async move {
            if let Err(e) = crate::store::alerts::raise(&db, &agent_id, kind, &detail, data, now).await {
                tracing::warn!(error = %e, kind, "could not raise an alert");
            }
        });
    }

    /// The most a call can cost: its input as counted here (messages and tool definitions) and
    /// every token of its `max_tokens`. What a hold takes, so that calls started together at a
    /// cap's edge cannot together pass it by more than one call's worst case; the rest is given
    /// back when the call's usage is known.
    fn worst_case_usd(&self, request: &ModelRequest) -> f64 {
        let input = request.messages.iter().map(super::super::super::context::message_tokens).sum::<usize>()
            + request
                .tools
                .iter()
                .map(|t| {
                    super::super::super::context::estimate_tokens(&t.description)
                        + super::super::super::context::estimate_tokens(&t.parameters.to_string())
                })
                .sum::<usize>();
        let output = u64::from(request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS));
        let worst = self.prices.cost_usd(&request.model, input as u64, 0, output);
        worst.max(self.prices.floor_usd(&request.model))
    }

    pub(super) async fn hold(&self, request: &ModelRequest) -> Result<Hold, Stop> {
        let worst_usd = self.worst_case_usd(request);
        let agent = &self.ctx.agent;
        let limits = Limits {
            agent_id: &agent.id,
            visitor_id: &self.ctx.visitor_id,
            budget_usd: agent.limits.budget_usd,
            daily_cap_usd: self.caps.agent_usd,
            visitor_daily_cap_usd: self.caps.visitor_usd,
            address: &self.caps.address,
            address_daily_cap_usd: self.caps.address_usd,
            floor_usd: worst_usd,
            now_ms: self.ctx.clock.now_ms(),
        };
        match self.budgets.hold(&self.ctx.db, &self.out.lease, limits).await {
            Ok(Ok(hold)) => Ok(hold),
            Ok(Err(hit)) => {
                let (spent, limit, kind) = match hit {
                    LimitHit::Conversation { spent_usd, budget_usd } => (spent_usd, budget_usd, "conversation"),
                    LimitHit::AgentDaily { spent_usd, cap_usd } => (spent_usd, cap_usd, "agent daily"),
                    LimitHit::VisitorDaily { spent_usd, cap_usd } => (spent_usd, cap_usd, "visitor daily"),
                    LimitHit::AddressDaily { spent_usd, cap_usd } => (spent_usd, cap_usd, "address daily"),
                };
                tracing::info!(conversation = %self.out.conversation_id, kind, spent, limit, "budget reached");
                if let LimitHit::AgentDaily { spent_usd, cap_usd } = hit {
                    let detail = format!("spent ${spent_usd:.4} of a ${cap_usd:.2} daily cap");
                    let data = serde_json::json!({"spent_usd": spent_usd, "cap_usd": cap_usd});
                    self.alert(crate::store::alerts::CAP_REACHED, detail, data);
                }
                metrics::counter!("parley_budget_refusals_total", "agent" => agent.public_key.clone(), "limit" => kind)
                    .increment(1);
                Err(Stop::Limit(StreamCode::BudgetExceeded))
            }
            Err(e) => {
                tracing::error!(error = %e, "could not read today's spend");
                Err(Stop::Limit(StreamCode::InternalError))
            }
        }
    }
}
