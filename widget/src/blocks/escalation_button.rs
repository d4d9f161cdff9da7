//! `escalation_button`: opens the lead form; says so once the visitor has sent it.

use leptos::prelude::*;

use super::BlockCtx;
use crate::protocol::EscalationButton;

#[component]
pub fn EscalationButtonView(block: EscalationButton, ctx: BlockCtx) -> impl IntoView {
    let done = ctx.lead_submitted;
    view! {
        <div class="pw-block pw-escalation">
            <button
                type="button"
                class="pw-escalate"
                disabled=move || done.get()
                on:click=move |_| ctx.on_escalate.run(())
            >
                {move || if done.get() { format!("✓ {}", ctx.labels.lead_done) } else { block.label.clone() }}
            </button>
        </div>
    }
}
