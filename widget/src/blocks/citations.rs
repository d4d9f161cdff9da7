//! `citations`: the sources an answer drew on, listed under it (links only for http and https).

use super::{BlockCtx, esc, safe_link};
use crate::protocol::Citations;

pub fn render(block: &Citations, ctx: &BlockCtx) -> String {
    let mut out = format!("<ol class=\"pw-block pw-citations\" aria-label=\"{}\">", esc(ctx.labels.sources));
    for source in &block.sources {
        let title = esc(&source.title);
        match source.url.as_deref().and_then(safe_link) {
            Some(href) => out.push_str(&format!(
                "<li><a href=\"{}\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">{title}</a></li>",
                esc(href)
            )),
            None => out.push_str(&format!("<li>{title}</li>")),
        }
    }
    out.push_str("</ol>");
    out
}
