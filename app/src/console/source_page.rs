//! `/admin/sources/:id`: one source of a knowledge base: its actions, the live progress of its
//! run, its run history, and its pages (filter by status, paging), each with its passages as the
//! agent sees them, and Exclude / Include again (a website) or Delete (a file, a snippet).

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};

use super::api::sources::{
    delete_page, exclude_page, include_page, page_passages, source, source_pages, source_runs, update_website,
};
use super::fields::{ErrorLine, FormStatus, Notice};
use super::layout::confirm;
use super::lists::{Pager, page_param, query, when};
use super::loaded::{Failure, Loaded};
use super::render_once::once;
use super::source_run::{RunProgress, SourceActions};
use super::sources::{WebsiteFields, settle};
use super::types::{PAGE_STATUSES, PageItem, PassageItem, SourceItem, WebsiteForm};

/// `/admin/sources/:id`.
#[component]
pub fn SourcePage() -> impl IntoView {
    let params = use_params_map();
    let id = Signal::derive(move || params.read().get("id").unwrap_or_default());
    // Bumped when something changed the source (an action, or the end of a run).
    let version = RwSignal::new(0u64);
    // What this page shows changes while a run is under way: one answer per server render
    // (`render_once`).
    let data = Resource::new(move || (id.get(), version.get()), |(id, _)| once(format!("source {id}"), source(id)));
    view! {
        <Loaded resource=data let:s>
            <SourceHead source=s.clone() version />
        </Loaded>
        <RunProgress source_id=id version />
        <RunHistory source_id=id version />
        <Pages source_id=id version />
    }
}

/// The source's name, scope and actions.
#[component]
fn SourceHead(source: SourceItem, version: RwSignal<u64>) -> impl IntoView {
    let back = format!("/admin/knowledge/{}/sources", source.knowledge_base_id);
    let scope = source.is_website().then(|| {
        let patterns = |list: &[String]| if list.is_empty() { "—".to_owned() } else { list.join(", ") };
        view! {
            <dl class="c-facts">
                <dt>"Start URL"</dt><dd><a href=source.start_url.clone() rel="noopener noreferrer">{source.start_url.clone()}</a></dd>
                <dt>"Path prefix"</dt><dd>{if source.path_prefix.is_empty() { "—".to_owned() } else { source.path_prefix.clone() }}</dd>
                <dt>"Include"</dt><dd>{patterns(&source.include)}</dd>
                <dt>"Exclude"</dt><dd>{patterns(&source.exclude)}</dd>
                <dt>"Page limit"</dt><dd>{if source.page_limit == 0 { "default".to_owned() } else { source.page_limit.to_string() }}</dd>
                <dt>"Schedule"</dt><dd>{source.schedule.clone()}{source.next_sync_at.map(|t| format!(" (next {} UTC)", when(t)))}</dd>
            </dl>
        }
    });
    view! {
        <p><A href=back.clone()>"← Sources"</A></p>
        <h1>{source.name.clone()}</h1>
        <p class="c-hint">{format!("{} source · {}", source.kind, source.counts_line())}</p>
        {scope}
        <SourceActions source=source.clone() version after_delete=back />
        {source.is_website().then(|| view! { <EditWebsite source version /> })}
    }
}

/// A website's name, scope and schedule, changed in place; the next run uses them (a new
/// schedule counts from now).
#[component]
fn EditWebsite(source: SourceItem, version: RwSignal<u64>) -> impl IntoView {
    let form = RwSignal::new(WebsiteForm::from(&source));
    let status = FormStatus::default();
    let id = source.id.clone();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let id = id.clone();
        leptos::task::spawn_local(async move {
            if settle(status, update_website(id, form.get_untracked()).await).is_some() {
                status.notice.set(Some("Saved: the next run uses these settings.".into()));
                version.update(|v| *v += 1);
            }
        });
    };
    view! {
        <details class="c-card" id="edit-website">
            <summary>"Edit settings"</summary>
            <form class="c-form" on:submit=submit novalidate=true aria-label="Website settings">
                <WebsiteFields form errors=status.errors />
                <Notice status />
                <button type="submit" class="c-primary">"Save settings"</button>
            </form>
        </details>
    }
}

/// The source's latest runs with their counts.
#[component]
fn RunHistory(source_id: Signal<String>, version: RwSignal<u64>) -> impl IntoView {
    let runs = Resource::new(
        move || (source_id.get(), version.get()),
        |(id, _)| once(format!("source_runs {id}"), source_runs(id)),
    );
    view! {
        <h2 id="run-history-title">"Run history"</h2>
        <Loaded resource=runs let:list>
            <table class="c-table" id="run-history" aria-labelledby="run-history-title">
                <thead><tr>
                    <th>"Started (UTC)"</th><th>"State"</th><th>"Took"</th><th>"Found"</th><th>"Fetched"</th>
                    <th>"Indexed"</th><th>"Unchanged"</th><th>"Skipped"</th><th>"Failed"</th><th>"Retired"</th>
                </tr></thead>
                <tbody>{list.into_iter().map(|r| {
                    let took = if r.active() { "…".to_owned() } else { r.elapsed(r.started_at) };
                    let state = match &r.reason { Some(why) => format!("{} ({why})", r.state), None => r.state.clone() };
                    view! {
                        <tr>
                            <td>{when(r.started_at)}</td><td>{state}</td><td>{took}</td><td>{r.found}</td><td>{r.fetched}</td>
                            <td>{r.indexed}</td><td>{r.unchanged}</td><td>{r.skipped}</td><td>{r.failed}</td><td>{r.retired}</td>
                        </tr>
                    }
                }).collect_view()}</tbody>
            </table>
        </Loaded>
    }
}

/// The source's pages: a status filter, a page of rows, the passages of the one shown.
#[component]
fn Pages(source_id: Signal<String>, version: RwSignal<u64>) -> impl IntoView {
    let q = use_query_map();
    let status = Signal::derive(move || q.read().get("status").unwrap_or_default());
    let page = move || page_param(&q.read());
    let tick = RwSignal::new(0u64);
    let list = Resource::new(
        move || (source_id.get(), status.get(), page(), version.get(), tick.get()),
        |(id, s, p, _, _)| once(format!("source_pages {id} {s} {p}"), source_pages(id, s, p)),
    );
    // A list that shows pages still queued reads itself again every 2 seconds until none is (a
    // run shorter than the progress's first poll ends unseen by it).
    Effect::new(move |_| {
        let poll = move || {
            let waiting =
                list.get_untracked().and_then(Result::ok).is_some_and(|l| l.items.iter().any(|p| p.status == "queued"));
            if waiting {
                tick.update(|t| *t += 1);
            }
        };
        if let Ok(handle) = set_interval_with_handle(poll, std::time::Duration::from_secs(2)) {
            on_cleanup(move || handle.clear());
        }
    });
    let shown = RwSignal::new(None::<(String, String)>);
    let error = RwSignal::new(None::<String>);
    let navigate = use_navigate();
    let filter = move |ev: leptos::ev::Event| {
        let path =
            format!("/admin/sources/{}{}", source_id.get_untracked(), query(&[("status", &event_target_value(&ev))]));
        navigate(&path, Default::default());
    };
    view! {
        <h2 id="pages-title">"Pages"</h2>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <label for="page-status">"Status"</label>
            <select id="page-status" on:change=filter>
                {PAGE_STATUSES.iter().map(|(v, l)| view! { <option value=*v selected=move || status.with(|s| s == v)>{*l}</option> }).collect_view()}
            </select>
        </form>
        <ErrorLine error />
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || list.get().map(|answer| match answer {
                Ok(p) => view! {
                    <table class="c-table" id="pages" aria-labelledby="pages-title">
                        <thead><tr><th>"Page"</th><th>"Title"</th><th>"Status"</th><th>"Reason"</th><th>"Fetched (UTC)"</th><th>"Actions"</th></tr></thead>
                        <tbody>{p.items.into_iter().map(|item| view! { <PageRow item shown version error /> }).collect_view()}</tbody>
                    </table>
                    <Pager base=format!("/admin/sources/{}{}", source_id.get_untracked(), query(&[("status", &status.get_untracked())])) page=p.page per_page=p.per_page total=p.total />
                }.into_any(),
                Err(e) => view! { <Failure error=e /> }.into_any(),
            })}
        </Transition>
        <Passages shown />
    }
}

/// One page of the list with what can be done to it.
#[component]
fn PageRow(
    item: PageItem,
    shown: RwSignal<Option<(String, String)>>,
    version: RwSignal<u64>,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let label = item.title.clone().filter(|t| !t.is_empty()).unwrap_or_else(|| item.url.clone());
    let place = if item.is_link() {
        view! { <a href=item.url.clone() rel="noopener noreferrer">{item.url.clone()}</a> }.into_any()
    } else if item.url.starts_with("snippet:") {
        view! { <span>"Q&A snippet"</span> }.into_any()
    } else {
        view! { <span>{item.url.clone()}</span> }.into_any()
    };
    let act =
        move |call: std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), super::error::ConsoleError>>>>| {
            leptos::task::spawn_local(async move {
                match call.await {
                    Ok(()) => {
                        error.set(None);
                        version.update(|v| *v += 1);
                    }
                    Err(e) => error.set(Some(e.to_string())),
                }
            });
        };
    let (id, show_label) = (item.id.clone(), label.clone());
    let passages = item.indexed.then(|| {
        view! {
            <button type="button" aria-label=format!("Passages: {label}")
                on:click=move |_| shown.set(Some((id.clone(), show_label.clone())))>"Passages"</button>
        }
    });
    let website_page = item.is_link();
    let id = item.id.clone();
    let change = match item.status.as_str() {
        "excluded" => Some(view! {
            <button type="button" aria-label=format!("Include again: {label}") on:click=move |_| act(Box::pin(include_page(id.clone())))>"Include again"</button>
        }.into_any()),
        _ if !website_page => Some(view! {
            <button type="button" class="c-danger" aria-label=format!("Delete: {label}") on:click=move |_| {
                if confirm("Delete this item? Its passages leave the knowledge base.") {
                    act(Box::pin(delete_page(id.clone())))
                }
            }>"Delete"</button>
        }.into_any()),
        "indexed" | "skipped" | "failed" | "gone" => Some(view! {
            <button type="button" aria-label=format!("Exclude: {label}") on:click=move |_| act(Box::pin(exclude_page(id.clone())))>"Exclude"</button>
        }.into_any()),
        _ => None,
    };
    view! {
        <tr>
            <td class="c-clip">{place}</td>
            <td>{item.title.clone().unwrap_or_default()}</td>
            <td><span class=format!("c-badge c-badge-{}", item.status)>{item.status.clone()}</span></td>
            <td>{item.reason.clone().unwrap_or_default()}</td>
            <td>{item.fetched_at.map(when).unwrap_or_default()}</td>
            <td class="c-row-actions">{passages}{change}</td>
        </tr>
    }
}

/// The passages of the page chosen in the list, as the agent reads them, each with its citation.
#[component]
fn Passages(shown: RwSignal<Option<(String, String)>>) -> impl IntoView {
    let data = Resource::new(
        move || shown.get().map(|(id, _)| id),
        |id| async move {
            match id {
                Some(id) => page_passages(id).await,
                None => Ok(Vec::new()),
            }
        },
    );
    move || {
        shown.get().map(|(_, label)| {
            view! {
                <section class="c-card" id="passages" aria-labelledby="passages-title">
                    <h2 id="passages-title">{format!("Passages of {label}")}</h2>
                    <Loaded resource=data let:list>
                        <ol class="c-passages">{list.into_iter().map(passage).collect_view()}</ol>
                    </Loaded>
                    <button type="button" on:click=move |_| shown.set(None)>"Close passages"</button>
                </section>
            }
        })
    }
}

fn passage(p: PassageItem) -> impl IntoView {
    let html = parley_widget::markdown::render(&p.text).into_string();
    view! {
        <li>
            <div class="c-md c-passage" inner_html=html></div>
            {p.url.map(|url| view! {
                <p class="c-hint">"Cited as: "<a href=url.clone() rel="noopener noreferrer">{url.clone()}</a></p>
            })}
        </li>
    }
}
