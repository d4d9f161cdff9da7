//! `citations`: the sources an answer drew on, listed under it (links only for http and https).

use leptos::prelude::*;

use super::BlockCtx;
use crate::protocol::Citations;

fn safe_link(url: Option<&str>) -> Option<String> {
    let url = url?.trim();
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then(|| url.to_owned())
}

#[component]
pub fn CitationsView(block: Citations, ctx: BlockCtx) -> impl IntoView {
    view! {
        <ol class="pw-block pw-citations" aria-label=ctx.labels.sources>
            {block
                .sources
                .into_iter()
                .map(|source| {
                    let title = source.title.clone();
                    match safe_link(source.url.as_deref()) {
                        Some(href) => view! {
                            <li>
                                <a href=href target="_blank" rel="noopener noreferrer nofollow">{title}</a>
                            </li>
                        }
                        .into_any(),
                        None => view! { <li>{title}</li> }.into_any(),
                    }
                })
                .collect_view()}
        </ol>
    }
}
