//! The block renderer registry: one `match` from block type to renderer, each renderer in its
//! own file. A block is drawn only when [`can_render`] says so; otherwise its `fallback_text`.
//!
//! Renderers write [`Html`] (their templates escape what a tool wrote), so the visitor's panel
//! (`innerHTML`) and the operator's console (Leptos's `inner_html`) show blocks from one piece of
//! code. The two things a block
//! does live in the page that shows it: a click on `[data-pw="escalate"]` (the panel opens its
//! lead form) and the payment countdown ([`tick_countdowns`], once a second).

mod card;
mod citations;
mod escalation_button;
mod form;
mod news_card;
mod payment_qr;
mod quick_replies;

pub use payment_qr::{now_ms, tick_countdowns};

use crate::html::{Html, html};
use crate::i18n::{Labels, Lang};
use crate::protocol::Block;

/// What renderers may use from the page that shows them.
pub struct BlockCtx<'a> {
    /// Capabilities the server authorised for this agent (sent at boot).
    pub capabilities: &'a [String],
    pub labels: &'static Labels,
    /// The panel's language (amounts, dates).
    pub lang: Lang,
    /// The visitor already left their contact details.
    pub lead_submitted: bool,
    /// Outside the agent's business hours: the escalation leaves a message.
    pub away: bool,
    /// Now, in milliseconds since 1970 (payment countdowns).
    pub now_ms: i64,
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

/// One block as HTML: drawn, or its fallback text, or nothing.
pub fn render(block: &Block, ctx: &BlockCtx) -> Html {
    if !can_render(block, ctx.capabilities) {
        return match block.fallback_text() {
            Some(text) if !text.trim().is_empty() => html!("<p class=\"pw-block-fallback\">{}</p>", text),
            _ => Html::new(),
        };
    }
    match block {
        Block::EscalationButton(b) => escalation_button::render(b, ctx),
        Block::PaymentQr(b) => payment_qr::render(b, ctx),
        Block::NewsCard(b) => news_card::render(b, ctx),
        Block::Citations(b) => citations::render(b, ctx),
        Block::QuickReplies(b) => quick_replies::render(b, ctx),
        Block::ChoiceCard(b) => card::render(b, ctx),
        Block::Form(b) => form::render(b, ctx),
        Block::FormAnswers(b) => form::render_answers(b, ctx),
        Block::Unknown(_) => Html::new(),
    }
}

/// A link target a block may use: http and https only.
fn safe_link(url: &str) -> Option<&str> {
    let url = url.trim();
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{EscalationButton, UnknownBlock};

    /// English, at the epoch, nothing sent yet, with these capabilities (the renderers' tests).
    pub(super) fn ctx(capabilities: &[String]) -> BlockCtx<'_> {
        let lang = Lang::En;
        BlockCtx { capabilities, labels: lang.labels(), lang, lead_submitted: false, away: false, now_ms: 0 }
    }

    #[test]
    fn renders_only_authorised_known_blocks() {
        let button = Block::EscalationButton(EscalationButton {
            label: "x".into(),
            reason: None,
            fallback_text: "f <b>".into(),
            away: false,
        });
        assert!(can_render(&button, &["ticket_escalation".into()]));
        assert!(!can_render(&button, &["news".into()]));
        let unknown = Block::Unknown(UnknownBlock { kind: "hologram".into(), fallback_text: None });
        assert!(!can_render(&unknown, &["ticket_escalation".into(), "hologram".into()]));

        let lang = Lang::En;
        let caps = vec!["news".to_owned()];
        let ctx = BlockCtx {
            capabilities: &caps,
            labels: lang.labels(),
            lang,
            lead_submitted: false,
            away: false,
            now_ms: 0,
        };
        assert_eq!(render(&button, &ctx).as_str(), "<p class=\"pw-block-fallback\">f &lt;b&gt;</p>");
        assert_eq!(render(&unknown, &ctx).as_str(), "");
        let caps = vec!["ticket_escalation".to_owned()];
        let ctx = BlockCtx { capabilities: &caps, lead_submitted: true, ..ctx };
        let html = render(&button, &ctx).into_string();
        assert!(html.contains("data-pw=\"escalate\" disabled"), "{html}");
    }

    #[test]
    fn every_block_escapes_what_a_tool_wrote() {
        use crate::protocol::{Citation, Citations, NewsCard, PaymentQr, PaymentStatus};
        let evil = "<script>x</script>\"' onload=\"x";
        let blocks = [
            Block::NewsCard(NewsCard {
                title: evil.into(),
                summary: evil.into(),
                date: evil.into(),
                source: evil.into(),
                url: Some(format!("https://a.example/{evil}")),
                fallback_text: evil.into(),
            }),
            Block::Citations(Citations {
                sources: vec![
                    Citation { title: evil.into(), url: Some(format!("http://a.example/{evil}")), article_id: None },
                    Citation { title: evil.into(), url: Some("javascript:alert(1)".into()), article_id: None },
                ],
                fallback_text: evil.into(),
            }),
            Block::PaymentQr(PaymentQr {
                order_id: evil.into(),
                amount_minor: 100,
                currency: evil.into(),
                method: evil.into(),
                qr_svg: evil.into(),
                pay_url: "javascript:alert(1)".into(),
                expires_at: 0,
                status: PaymentStatus::Pending,
                fallback_text: evil.into(),
            }),
            Block::EscalationButton(EscalationButton {
                label: evil.into(),
                reason: Some(evil.into()),
                fallback_text: evil.into(),
                away: false,
            }),
        ];
        let caps: Vec<String> =
            ["news", "knowledge_search", "payments", "ticket_escalation"].map(String::from).to_vec();
        let ctx = ctx(&caps);
        for block in &blocks {
            assert!(can_render(block, &caps), "{}", block.kind());
            let html = render(block, &ctx).into_string();
            assert!(!html.contains("<script") && !html.contains("\" onload"), "{}: {html}", block.kind());
            assert!(!html.contains("javascript:"), "{html}");
        }
    }

    #[test]
    fn only_web_links() {
        assert_eq!(safe_link(" https://a.example/x "), Some("https://a.example/x"));
        assert_eq!(safe_link("HTTP://a.example"), Some("HTTP://a.example"));
        assert_eq!(safe_link("javascript:alert(1)"), None);
        assert_eq!(safe_link("data:text/html,x"), None);
    }
}
