//! `escalation_button`: opens the lead form; says so once the visitor has sent it. The button
//! says the panel's own words (the block's label is in the server's language): "Leave a message"
//! outside the agent's business hours.

use leptos::prelude::*;

use super::BlockCtx;
use crate::protocol::EscalationButton;

#[component]
pub fn EscalationButtonView(block: EscalationButton, ctx: BlockCtx) -> impl IntoView {
    let done = ctx.lead_submitted;
    let label = if block.away || ctx.away { ctx.labels.leave_message } else { ctx.labels.escalate };
    view! {
        <div class="pw-block pw-escalation">
            <button
                type="button"
                class="pw-escalate"
                disabled=move || done.get()
                on:click=move |_| ctx.on_escalate.run(())
            >
                {move || if done.get() { format!("✓ {}", ctx.labels.lead_done) } else { label.to_owned() }}
            </button>
        </div>
    }
}
