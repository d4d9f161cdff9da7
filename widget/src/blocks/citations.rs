//! `citations`: the sources an answer drew on, listed under it (links only for http and https).

use super::{BlockCtx, safe_link};
use crate::html::{Html, html};
use crate::protocol::Citations;

pub fn render(block: &Citations, ctx: &BlockCtx) -> Html {
    let items: Html = block
        .sources
        .iter()
        .map(|source| match source.url.as_deref().and_then(safe_link) {
            Some(href) => html!(
                "<li><a href=\"{}\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">{}</a></li>",
                href,
                source.title
            ),
            None => html!("<li>{}</li>", source.title),
        })
        .collect();
    html!("<ol class=\"pw-block pw-citations\" aria-label=\"{}\">{}</ol>", ctx.labels.sources, items)
}
