//! `choice_card`: a card with an image, a title, a text and up to three buttons, each opening an
//! address (a link, in a new tab) or sending a message as the visitor's (`[data-pw="reply"]`,
//! like a quick reply; those go once anything follows the answer, the links stay).

use super::{BlockCtx, safe_link};
use crate::action::Action;
use crate::html::{Html, html};
use crate::protocol::ChoiceCard;

pub fn render(card: &ChoiceCard, _ctx: &BlockCtx) -> Html {
    let image = card
        .image_url
        .as_deref()
        .and_then(safe_link)
        .filter(|u| u.to_ascii_lowercase().starts_with("https://"))
        .map(|src| {
            html!(
                "<img class=\"pw-card-img\" src=\"{}\" alt=\"{}\" loading=\"lazy\" referrerpolicy=\"no-referrer\">",
                src,
                card.image_alt.as_deref().unwrap_or_default()
            )
        })
        .unwrap_or_default();
    let buttons: Html = card
        .buttons
        .iter()
        .filter_map(|b| match (b.url.as_deref().and_then(safe_link), b.message.as_deref()) {
            (Some(url), _) => Some(html!(
                "<a class=\"pw-card-link\" href=\"{}\" target=\"_blank\" rel=\"noopener noreferrer\">{}</a>",
                url,
                b.label
            )),
            (None, Some(text)) if !text.trim().is_empty() => Some(html!(
                "<button type=\"button\" class=\"pw-reply\" data-pw=\"{}\" data-text=\"{}\">{}</button>",
                Action::Reply,
                text.trim(),
                b.label
            )),
            _ => None,
        })
        .collect();
    let text = if card.text.is_empty() { Html::new() } else { html!("<p class=\"pw-card-text\">{}</p>", card.text) };
    html!(
        "<div class=\"pw-block pw-card\">{}<p class=\"pw-card-title\">{}</p>{}<div class=\"pw-card-actions\">{}</div></div>",
        image,
        card.title,
        text,
        buttons
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::CardButton;

    #[test]
    fn a_card_shows_its_image_text_links_and_message_buttons_escaped() {
        let caps = ["cards".to_owned()];
        let ctx = super::super::tests::ctx(&caps);
        let button = |label: &str, url: Option<&str>, message: Option<&str>| CardButton {
            label: label.into(),
            url: url.map(str::to_owned),
            message: message.map(str::to_owned),
        };
        let card = ChoiceCard {
            image_url: Some("https://shop.example/a.png?x=1&y=2".into()),
            image_alt: Some("A \"red\" chair".into()),
            title: "<b>Chair</b>".into(),
            text: "Oak".into(),
            buttons: vec![
                button("Buy", Some("https://shop.example/buy"), None),
                button("Tell me more", None, Some("More about the chair")),
                button("Bad", Some("javascript:alert(1)"), None),
            ],
            fallback_text: "Chair".into(),
        };
        let html = render(&card, &ctx).into_string();
        assert!(html.contains("src=\"https://shop.example/a.png?x=1&amp;y=2\""), "{html}");
        assert!(html.contains("alt=\"A &quot;red&quot; chair\""), "{html}");
        assert!(html.contains("&lt;b&gt;Chair&lt;/b&gt;"), "{html}");
        assert!(
            html.contains("href=\"https://shop.example/buy\" target=\"_blank\" rel=\"noopener noreferrer\">Buy</a>"),
            "{html}"
        );
        assert!(html.contains("data-pw=\"reply\" data-text=\"More about the chair\">Tell me more</button>"), "{html}");
        assert!(!html.contains("javascript"), "{html}");
        let plain = ChoiceCard { image_url: Some("http://insecure.example/a.png".into()), ..card };
        assert!(!render(&plain, &ctx).into_string().contains("<img"), "only https images");
    }
}
