//! `escalation_button`: opens the lead form; says so once the visitor has sent it. The button
//! says the panel's own words (the block's label is in the server's language): "Leave a message"
//! outside the agent's business hours.

use super::BlockCtx;
use crate::action::Action;
use crate::html::{Html, html};
use crate::icons;
use crate::protocol::EscalationButton;

pub fn render(block: &EscalationButton, ctx: &BlockCtx) -> Html {
    let l = ctx.labels;
    let (label, disabled) = match ctx.lead_submitted {
        true => (html!("{}{}", icons::html(icons::CHECK), l.lead_done), " disabled"),
        false if block.away || ctx.away => (html!("{}", l.leave_message), ""),
        false => (html!("{}", l.escalate), ""),
    };
    html!(
        "<div class=\"pw-block pw-escalation\"><button type=\"button\" class=\"pw-escalate\" \
         data-pw=\"{}\"{}>{}</button></div>",
        Action::Escalate,
        Html::from_static(disabled),
        label
    )
}
