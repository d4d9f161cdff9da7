//! `/admin/knowledge/:base/sources`: what a knowledge base learns from (issue 42): the list of
//! its sources (websites crawled, uploaded files, typed snippets) with their actions, a form for
//! a new website, file upload (a picker and a drop zone) and a form for a question and answer.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::api::sources::{add_snippet, add_website, sources};
use super::error::ConsoleError;
use super::fields::{Errors, FieldMessage, FormStatus, Notice, SelectField, TextArea, TextInput, bind};
use super::layout::go_to;
use super::lists::when;
use super::loaded::Loaded;
use super::render_once::once;
use super::source_run::SourceActions;
use super::types::{SCHEDULE_CHOICES, SourceItem, WebsiteForm};
use super::uploads::Upload;

/// `/admin/knowledge/:base/sources`.
#[component]
pub fn SourcesPage() -> impl IntoView {
    let params = use_params_map();
    let base = Signal::derive(move || params.read().get("base").unwrap_or_default());
    let version = RwSignal::new(0u64);
    // Its counts and runs change while a crawl is under way: one answer per server render.
    let list = Resource::new(move || (base.get(), version.get()), |(b, _)| once(format!("sources {b}"), sources(b)));
    // While a run is under way the list is read again every 2 seconds.
    Effect::new(move |_| {
        let poll = move || {
            let running = list.get_untracked().and_then(Result::ok).is_some_and(|l| l.iter().any(SourceItem::running));
            if running {
                version.update(|v| *v += 1);
            }
        };
        if let Ok(handle) = set_interval_with_handle(poll, std::time::Duration::from_secs(2)) {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <p><A href=move || format!("/admin/knowledge/{}", base.get())>"← Articles"</A></p>
        <h1>"Sources"</h1>
        <p class="c-hint">
            "The agent also answers from your own content: a website crawled on demand or on a schedule, \
             files you upload and questions you answer here. Each answer cites the page it came from."
        </p>
        <Loaded resource=list let:items>
            <SourceTable items version />
        </Loaded>
        <AddWebsite base />
        <Upload base version />
        <AddSnippet base version />
    }
}

/// The sources of the base, with their page counts, latest run and actions.
#[component]
fn SourceTable(items: Vec<SourceItem>, version: RwSignal<u64>) -> impl IntoView {
    if items.is_empty() {
        return view! { <p class="c-hint" id="sources">"No sources yet: add a website, upload files or type a question and its answer below."</p> }.into_any();
    }
    view! {
        <table class="c-table" id="sources">
            <caption class="c-sr">"Sources of this knowledge base"</caption>
            <thead><tr>
                <th>"Kind"</th><th>"Name"</th><th>"Start URL"</th><th>"Schedule"</th><th>"Pages"</th><th>"Last run"</th><th>"Actions"</th>
            </tr></thead>
            <tbody>{items.into_iter().map(|s| {
                let (href, name, schedule) = (format!("/admin/sources/{}", s.id), s.name.clone(), if s.is_website() { s.schedule.clone() } else { String::new() });
                let last = s.last_run.as_ref().map(|r| format!("{} · {} UTC", r.state, when(r.started_at))).unwrap_or_else(|| "never".into());
                view! {
                    <tr>
                        <td>{s.kind.clone()}</td>
                        <td><A href=href>{name}</A></td>
                        <td class="c-clip">{s.start_url.clone()}</td>
                        <td>{schedule}</td>
                        <td>{s.counts_line()}</td>
                        <td>{last}</td>
                        <td><SourceActions source=s version /></td>
                    </tr>
                }
            }).collect_view()}</tbody>
        </table>
    }
    .into_any()
}

/// Shows a refusal by field, or why the call failed.
pub(super) fn settle<T>(status: FormStatus, outcome: Result<T, ConsoleError>) -> Option<T> {
    match outcome {
        Ok(value) => {
            status.clear();
            Some(value)
        }
        Err(ConsoleError::Invalid(fields)) => {
            status.errors.set(fields);
            status.notice.set(Some("Please correct the fields marked below.".into()));
            None
        }
        Err(e) => {
            status.errors.set(vec![]);
            status.notice.set(Some(e.to_string()));
            None
        }
    }
}

/// A new website source; creating it queues its first run and opens its page.
#[component]
fn AddWebsite(base: Signal<String>) -> impl IntoView {
    let form = RwSignal::new(WebsiteForm::default());
    let status = FormStatus::default();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            let made = add_website(base.get_untracked(), form.get_untracked()).await;
            if let Some(id) = settle(status, made) {
                go_to(&format!("/admin/sources/{id}"));
            }
        });
    };
    view! {
        <form class="c-card c-form" id="add-website" on:submit=submit novalidate=true aria-labelledby="add-website-title">
            <h2 id="add-website-title">"Add a website"</h2>
            <WebsiteFields form errors=status.errors />
            <Notice status />
            <button type="submit" class="c-primary">"Add website"</button>
        </form>
    }
}

/// A website source's settings as form fields: adding one here, or editing it on its own page
/// (never both on one page: the ids are the same).
#[component]
pub(super) fn WebsiteFields(form: RwSignal<WebsiteForm>, errors: Errors) -> impl IntoView {
    view! {
        <TextInput id="ws-name" label="Website name" field="name" value=bind!(form.name) errors />
        <TextInput id="ws-start" label="Start URL (a page, or a sitemap)" field="start_url" kind="url"
            placeholder="https://www.example.com/" value=bind!(form.start_url) errors />
        <TextInput id="ws-prefix" label="Path prefix (only pages under it; empty: the whole site)" field="path_prefix"
            placeholder="/help/" value=bind!(form.path_prefix) errors />
        <TextArea id="ws-include" label="Include patterns (one per line, * any text; empty: all)" field="include"
            rows="3" spellcheck="false" value=bind!(form.include) errors />
        <TextArea id="ws-exclude" label="Exclude patterns (one per line)" field="exclude"
            rows="3" spellcheck="false" value=bind!(form.exclude) errors />
        <TextInput id="ws-limit" label="Page limit (0: the default)" field="page_limit" inputmode="numeric"
            value=bind!(form.page_limit) errors />
        <SelectField id="ws-schedule" label="Sync schedule" field="schedule" value=bind!(form.schedule) errors
            options=SCHEDULE_CHOICES />
    }
}

/// A question and its answer, indexed at once (listed as the Snippets source's pages).
#[component]
fn AddSnippet(base: Signal<String>, version: RwSignal<u64>) -> impl IntoView {
    let question = RwSignal::new(String::new());
    let answer = RwSignal::new(String::new());
    let status = FormStatus::default();
    let errors = status.errors;
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            let made = add_snippet(base.get_untracked(), question.get_untracked(), answer.get_untracked()).await;
            if settle(status, made).is_some() {
                question.set(String::new());
                answer.set(String::new());
                status.notice.set(Some("Snippet added: the agent can answer it now.".into()));
                version.update(|v| *v += 1);
            }
        });
    };
    view! {
        <form class="c-card c-form" id="add-snippet" on:submit=submit novalidate=true aria-labelledby="add-snippet-title">
            <h2 id="add-snippet-title">"Add a question and answer"</h2>
            <label for="sn-question">"Question"</label>
            <input id="sn-question" prop:value=question on:input=move |ev| question.set(event_target_value(&ev))
                aria-describedby="err-question" />
            <FieldMessage errors field="question" />
            <label for="sn-answer">"Answer"</label>
            <textarea id="sn-answer" rows="4" prop:value=answer on:input=move |ev| answer.set(event_target_value(&ev))
                aria-describedby="err-answer"></textarea>
            <FieldMessage errors field="answer" />
            <Notice status />
            <button type="submit" class="c-primary">"Add snippet"</button>
        </form>
    }
}
