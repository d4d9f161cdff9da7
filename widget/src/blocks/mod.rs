//! The block renderer registry: one `match` from block type to component, each renderer in its
//! own file. A block is drawn only when [`can_render`] says so; otherwise its `fallback_text`.

mod citations;
mod escalation_button;
mod news_card;
mod payment_qr;

use leptos::prelude::*;

use crate::i18n::{Labels, Lang};
use crate::protocol::Block;

/// What renderers may use from the panel.
#[derive(Clone, Copy)]
pub struct BlockCtx {
    /// Capabilities the server authorised for this agent (sent at boot).
    pub capabilities: StoredValue<Vec<String>>,
    pub labels: &'static Labels,
    /// The panel's language (amounts, dates).
    pub lang: Lang,
    /// Opens the lead form (escalation button).
    pub on_escalate: Callback<()>,
    /// The visitor already left their contact details.
    pub lead_submitted: RwSignal<bool>,
    /// Outside the agent's business hours: the escalation leaves a message.
    pub away: bool,
}

/// Whether this bundle has a renderer for the block.
pub fn has_renderer(block: &Block) -> bool {
    !matches!(block, Block::Unknown(_))
}

/// A block is rendered only if the server authorised its capability for this agent and this
/// bundle has a renderer for it.
pub fn can_render(block: &Block, capabilities: &[String]) -> bool {
    has_renderer(block) && block.capability().is_some_and(|c| capabilities.iter().any(|have| have == c))
}

/// Renders one block, or its fallback text, or nothing.
#[component]
pub fn BlockView(block: Block, ctx: BlockCtx) -> impl IntoView {
    if !ctx.capabilities.with_value(|caps| can_render(&block, caps)) {
        return match block.fallback_text() {
            Some(text) if !text.trim().is_empty() => {
                view! { <p class="pw-block-fallback">{text.to_owned()}</p> }.into_any()
            }
            _ => ().into_any(),
        };
    }
    match block {
        Block::EscalationButton(b) => view! { <escalation_button::EscalationButtonView block=b ctx /> }.into_any(),
        Block::PaymentQr(b) => view! { <payment_qr::PaymentQrView block=b ctx /> }.into_any(),
        Block::NewsCard(b) => view! { <news_card::NewsCardView block=b ctx /> }.into_any(),
        Block::Citations(b) => view! { <citations::CitationsView block=b ctx /> }.into_any(),
        Block::Unknown(_) => ().into_any(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{EscalationButton, UnknownBlock};

    #[test]
    fn renders_only_authorised_known_blocks() {
        let button = Block::EscalationButton(EscalationButton {
            label: "x".into(),
            reason: None,
            fallback_text: "f".into(),
            away: false,
        });
        assert!(can_render(&button, &["ticket_escalation".into()]));
        assert!(!can_render(&button, &["news".into()]));
        let unknown = Block::Unknown(UnknownBlock { kind: "hologram".into(), fallback_text: None });
        assert!(!can_render(&unknown, &["ticket_escalation".into(), "hologram".into()]));
    }
}
