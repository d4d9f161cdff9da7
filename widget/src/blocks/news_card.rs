//! `news_card`: title, summary, date (written for the panel's language, the tool's own form in
//! `datetime`), source and a link (http and https only).

use super::{BlockCtx, esc, safe_link};
use crate::protocol::NewsCard;

pub fn render(block: &NewsCard, ctx: &BlockCtx) -> String {
    let link = block.url.as_deref().and_then(safe_link).map(|href| {
        format!(
            "<a class=\"pw-news-link\" href=\"{}\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">{} →</a>",
            esc(href),
            esc(ctx.labels.read_more)
        )
    });
    format!(
        "<article class=\"pw-block pw-news\"><h4 class=\"pw-news-title\">{}</h4>\
         <p class=\"pw-news-summary\">{}</p><p class=\"pw-news-meta\"><time datetime=\"{}\">{}</time> · \
         <span>{}</span></p>{}</article>",
        esc(&block.title),
        esc(&block.summary),
        esc(&block.date),
        esc(&ctx.lang.date(&block.date)),
        esc(&block.source),
        link.unwrap_or_default()
    )
}
