//! `news_card`: title, summary, date (written for the panel's language, the tool's own form in
//! `datetime`), source and a link (http and https only).

use leptos::prelude::*;

use super::BlockCtx;
use crate::protocol::NewsCard;

fn safe_link(url: &str) -> Option<String> {
    let lower = url.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then(|| url.trim().to_owned())
}

#[component]
pub fn NewsCardView(block: NewsCard, ctx: BlockCtx) -> impl IntoView {
    let link = block.url.as_deref().and_then(safe_link);
    view! {
        <article class="pw-block pw-news">
            <h4 class="pw-news-title">{block.title}</h4>
            <p class="pw-news-summary">{block.summary}</p>
            <p class="pw-news-meta">
                <time datetime=block.date.clone()>{ctx.lang.date(&block.date)}</time>
                " · "
                <span>{block.source}</span>
            </p>
            {link.map(|href| view! {
                <a class="pw-news-link" href=href target="_blank" rel="noopener noreferrer nofollow">
                    {ctx.labels.read_more}
                    " →"
                </a>
            })}
        </article>
    }
}
