//! `quick_replies`: answers the visitor can tap instead of typing. A tap sends the reply's text
//! as the visitor's message (`[data-pw="reply"]`, its `data-text`); the stylesheet hides the
//! buttons of every answer that something follows, so they go once used (also after a reload).

use super::BlockCtx;
use crate::action::Action;
use crate::html::{Html, html};
use crate::protocol::{MAX_QUICK_REPLIES, MAX_QUICK_REPLY_CHARS, QuickReplies};

pub fn render(block: &QuickReplies, ctx: &BlockCtx) -> Html {
    let buttons: Html = block
        .replies
        .iter()
        .map(|r| r.trim())
        .filter(|r| !r.is_empty())
        .take(MAX_QUICK_REPLIES)
        .map(|r| {
            let text: String = r.chars().take(MAX_QUICK_REPLY_CHARS).collect();
            html!(
                "<button type=\"button\" class=\"pw-reply\" data-pw=\"{}\" data-text=\"{}\">{}</button>",
                Action::Reply,
                text,
                text
            )
        })
        .collect();
    html!(
        "<div class=\"pw-block pw-quick\" role=\"group\" aria-label=\"{}\">{}</div>",
        ctx.labels.quick_replies,
        buttons
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_buttons_with_their_text_escaped_trimmed_and_capped() {
        let caps = ["quick_replies".to_owned()];
        let ctx = super::super::tests::ctx(&caps);
        let mut replies: Vec<String> = (1..=8).map(|i| format!("Option {i}")).collect();
        replies[0] = "  <b>\"Yes\"</b>  ".into();
        replies[1] = " ".into();
        let html = render(&QuickReplies { replies, fallback_text: "Options".into() }, &ctx).into_string();
        assert_eq!(html.matches("<button").count(), MAX_QUICK_REPLIES, "{html}");
        assert!(html.contains("data-text=\"&lt;b&gt;&quot;Yes&quot;&lt;/b&gt;\""), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("data-pw=\"reply\""), "{html}");
        assert!(html.contains("aria-label=\"Quick replies\""), "{html}");
    }
}
