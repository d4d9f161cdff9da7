//! `escalate_to_human` (capability `ticket_escalation`): offers the visitor a button that opens
//! the lead form, and tells the model a person can take over.

use parley_protocol::{Block, EscalationButton};
use serde_json::{Value, json};

use super::super::hours::Availability;
use super::super::lang::Lang;
use super::{Tool, ToolContext, ToolError, ToolOutput};

pub struct EscalateToHuman;

#[async_trait::async_trait]
impl Tool for EscalateToHuman {
    fn name(&self) -> &'static str {
        "escalate_to_human"
    }

    fn description(&self) -> &'static str {
        "Offer the visitor a button to reach a human operator. Use it only when the visitor asks \
         for a person, or when you cannot help and a person could."
    }

    fn capability(&self) -> &'static str {
        "ticket_escalation"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::READ
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string", "maxLength": 500, "description": "Why a person is needed, in a few words."}
            },
            "additionalProperties": false
        })
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let reason =
            args.get("reason").and_then(Value::as_str).map(str::trim).filter(|r| !r.is_empty()).map(str::to_owned);
        // The agent's language; with `auto`, the reason's words, else its greeting's.
        let lang = Lang::of_agent(ctx.agent.language, reason.as_deref().unwrap_or(&ctx.agent.greeting));
        // Outside business hours the visitor leaves a message, and the model says when people are back.
        let hours = crate::store::hours::of_agent(&ctx.db, &ctx.agent.id).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "reading business hours; people counted as reachable");
            None
        });
        let away = hours.and_then(|h| match h.at(ctx.clock.now_ms()) {
            Availability::Open => None,
            Availability::Closed { reopens_at } => Some(reopens_at.map(|at| h.local_time(at))),
        });
        let result = match &away {
            None => json!({
                "ok": true,
                "button_shown": true,
                "message": "A button to contact a person is shown to the visitor. Tell them to press it and leave their contact details."
            }),
            Some(back) => json!({
                "ok": true,
                "button_shown": true,
                "people_online": false,
                "back_at": back,
                "message": format!(
                    "Nobody from the team is online now{}. A button to leave a message is shown: tell the visitor to press it and leave their contact details, and that a person will answer {}. Keep helping them meanwhile.",
                    back.as_deref().map(|b| format!(" (they are back {b})")).unwrap_or_default(),
                    if back.is_some() { "when the team is back" } else { "as soon as possible" },
                ),
            }),
        };
        Ok(ToolOutput { result, blocks: vec![escalation_block(lang, reason, away.is_some())] })
    }
}

/// The "talk to a person" button (also offered when a turn hits a limit); "leave a message" when
/// nobody is in (`away`).
pub fn escalation_block(lang: Lang, reason: Option<String>, away: bool) -> Block {
    let (label, fallback) = match away {
        false => lang.pick(
            (
                "Talk to a person",
                "To reach a person, leave your name and email or phone number and we'll get back to you.",
            ),
            ("联系人工", "如需人工帮助，请留下您的姓名和联系方式，我们的顾问会尽快联系您。"),
        ),
        true => lang.pick(
            (
                "Leave a message",
                "Nobody is online right now. Leave your name and email or phone number and we'll get back to you.",
            ),
            ("给我们留言", "目前没有顾问在线。请留下您的姓名和联系方式，我们上班后会尽快联系您。"),
        ),
    };
    Block::EscalationButton(EscalationButton {
        label: label.to_owned(),
        reason,
        fallback_text: fallback.to_owned(),
        away,
    })
}
