//! `news_card`: title, summary, date (written for the panel's language, the tool's own form in
//! `datetime`), source and a link (http and https only).

use super::{BlockCtx, safe_link};
use crate::html::{Html, html};
use crate::protocol::NewsCard;

pub fn render(block: &NewsCard, ctx: &BlockCtx) -> Html {
    let link = block.url.as_deref().and_then(safe_link).map(|href| {
        html!(
            "<a class=\"pw-news-link\" href=\"{}\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">{} →</a>",
            href,
            ctx.labels.read_more
        )
    });
    html!(
        "<article class=\"pw-block pw-news\"><h4 class=\"pw-news-title\">{}</h4>\
         <p class=\"pw-news-summary\">{}</p><p class=\"pw-news-meta\"><time datetime=\"{}\">{}</time> · \
         <span>{}</span></p>{}</article>",
        block.title,
        block.summary,
        block.date,
        ctx.lang.date(&block.date),
        block.source,
        link.unwrap_or_default()
    )
}
