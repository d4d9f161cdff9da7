//! `/admin/search`: the conversations an operator may see whose messages, private notes, leads or
//! identified users hold every word searched for (issue 43, part 4). Matches are wrapped in `<mark>` as text
//! nodes: the server sends plain text and ranges, never HTML.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_query_map;

use super::api::search::search;
use super::lists::{Badge, Pager, page_param, query, when};
use super::loaded::Loaded;
use super::types::{SearchHit, SearchResult};

/// The search box of the console's top bar: a plain GET form, so it works before the page's
/// script has loaded and from the keyboard (`/` is not taken over).
#[component]
pub fn SearchBox() -> impl IntoView {
    view! {
        <form class="c-search" role="search" method="get" action="/admin/search">
            <label for="c-search-q" class="c-sr">"Search conversations, notes and leads"</label>
            <input id="c-search-q" name="q" type="search" placeholder="Search…" maxlength="200" />
            <button type="submit">"Search"</button>
        </form>
    }
}

/// `/admin/search?q=…&page=…`.
#[component]
pub fn SearchPage() -> impl IntoView {
    let q = use_query_map();
    let text = move || q.read().get("q").unwrap_or_default();
    let page = move || page_param(&q.read());
    let results = Resource::new(move || (text(), page()), |(text, page)| search(text, page));
    view! {
        <h1>"Search"</h1>
        <form class="c-filters" role="search" method="get" action="/admin/search">
            <label for="s-q">"Words to find in messages, private notes and leads (English or Chinese)"</label>
            <input id="s-q" name="q" type="search" maxlength="200" prop:value=text />
            <button type="submit">"Search"</button>
        </form>
        <p class="c-hint">"Every word must match; English words match their other forms (refund, refunds). Only conversations you may see are searched; texts written in the last few seconds may not be found yet."</p>
        <Show when=move || !text().trim().is_empty()>
            <Loaded resource=results let:p>
                <p role="status">{format!("{} conversation{} found", p.total, if p.total == 1 { "" } else { "s" })}</p>
                <ol class="c-results">
                    {p.items.into_iter().map(|r| view! { <Found r /> }).collect_view()}
                </ol>
                <Pager base=format!("/admin/search{}", query(&[("q", &text())])) page=p.page per_page=p.per_page total=p.total />
            </Loaded>
        </Show>
    }
}

#[component]
fn Found(r: SearchResult) -> impl IntoView {
    let href = format!("/admin/conversations/{}", r.conversation_id);
    let more = r.matches - r.hits.len() as i64;
    view! {
        <li class="c-card">
            <A href=href>{format!("{} · {}", r.agent_name, when(r.last_at))}</A>
            " " <Badge status=r.status />
            <ul class="c-hits">
                {r.hits.into_iter().map(|h| view! { <HitLine h /> }).collect_view()}
            </ul>
            {(more > 0).then(|| view! { <p class="c-hint">{format!("and {more} more")}</p> })}
        </li>
    }
}

#[component]
fn HitLine(h: SearchHit) -> impl IntoView {
    let kind = match h.kind.as_str() {
        "note" => "Private note",
        "lead" => "Lead",
        "user" => "Identified visitor",
        "contact" => "Contact",
        _ => "Message",
    };
    view! {
        <li>
            <span class="c-hit-kind">{kind}</span>" "<span class="c-hint">{when(h.at)}</span>
            <p class="c-snippet">
                {h.pieces().into_iter().map(|(text, matched)| if matched {
                    view! { <mark>{text}</mark> }.into_any()
                } else {
                    text.into_any()
                }).collect_view()}
            </p>
        </li>
    }
}
