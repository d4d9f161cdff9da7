//! A source's actions (Sync now, Cancel, Delete) and the live progress of its run: the run is
//! read again every second while it is queued or running.

use leptos::prelude::*;

use super::api::sources::{cancel_run, delete_source, source_run, sync_source};
use super::error::ConsoleError;
use super::fields::ErrorLine;
use super::layout::{confirm, go_to};
use super::lists::when;
use super::render_once::once;
use super::types::{RunItem, SourceItem};

/// Sync now (a website), Cancel (while a run is under way) and Delete (asks first). After a
/// delete the page goes to `after_delete`, or (none) reloads what depends on `version`.
#[component]
pub fn SourceActions(
    source: SourceItem,
    version: RwSignal<u64>,
    #[prop(optional, into)] after_delete: Option<String>,
) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let done = move |outcome: Result<(), ConsoleError>| match outcome {
        Ok(()) => {
            error.set(None);
            version.update(|v| *v += 1);
        }
        Err(e) => error.set(Some(e.to_string())),
    };
    let name = source.name.clone();
    let id = source.id.clone();
    let sync = source.is_website().then(|| {
        let id = id.clone();
        let run = move |_| {
            let id = id.clone();
            leptos::task::spawn_local(async move { done(sync_source(id).await.map(|_| ())) });
        };
        view! { <button type="button" class="c-primary" aria-label=format!("Sync now: {name}") on:click=run>"Sync now"</button> }
    });
    let cancel = source.running().then(|| {
        let id = id.clone();
        let stop = move |_| {
            let id = id.clone();
            leptos::task::spawn_local(async move { done(cancel_run(id).await) });
        };
        view! { <button type="button" aria-label=format!("Cancel the run: {}", source.name) on:click=stop>"Cancel"</button> }
    });
    let remove = move |_| {
        if !confirm("Delete this source? Its pages and their passages leave the knowledge base.") {
            return;
        }
        let (id, after) = (id.clone(), after_delete.clone());
        leptos::task::spawn_local(async move {
            match (delete_source(id).await, after) {
                (Ok(()), Some(path)) => go_to(&path),
                (outcome, _) => done(outcome),
            }
        });
    };
    view! {
        <div class="c-row-actions">
            {sync}
            {cancel}
            <button type="button" class="c-danger" aria-label=format!("Delete source: {}", source.name) on:click=remove>"Delete"</button>
        </div>
        <ErrorLine error />
    }
}

/// Now, in Unix milliseconds (the browser's clock there, the server's while rendering).
fn now_ms() -> i64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(not(feature = "hydrate"))]
    {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
    }
}

/// The source's latest run, read again every second while it runs; when it ends, `version`
/// moves on (the pages, the history and the actions reload).
#[component]
pub fn RunProgress(source_id: Signal<String>, version: RwSignal<u64>) -> impl IntoView {
    let tick = RwSignal::new(0u64);
    let run = Resource::new(
        move || (source_id.get(), tick.get(), version.get()),
        |(id, _, _)| once(format!("source_run {id}"), source_run(id)),
    );
    let active = move || run.get().and_then(Result::ok).flatten().is_some_and(|r| r.active());
    Effect::new(move |_| {
        let poll = move || {
            if run.get_untracked().and_then(Result::ok).flatten().is_some_and(|r| r.active()) {
                tick.update(|t| *t += 1);
            }
        };
        if let Ok(handle) = set_interval_with_handle(poll, std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    });
    // A run that was under way and is not any more: what it changed is shown.
    Effect::new(move |was: Option<bool>| {
        let now = active();
        if was == Some(true) && !now {
            version.update(|v| *v += 1);
        }
        now
    });
    view! {
        <Transition>
            {move || run.get().map(|r| match r {
                Ok(Some(r)) => view! { <RunView run=r /> }.into_any(),
                Ok(None) => view! { <p class="c-hint" id="run-progress" data-state="none">"No run yet."</p> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </Transition>
    }
}

/// A run's progress bar, counts, current page and time.
#[component]
fn RunView(run: RunItem) -> impl IntoView {
    let settled = run.settled();
    // Nothing found yet: a bar with no value (indeterminate) while it runs, full when it ended.
    let (value, max) = match (run.found, run.active()) {
        (0, true) => (None, 1),
        (0, false) => (Some(1), 1),
        (found, _) => (Some(settled.min(found)), found),
    };
    let headline = match run.state.as_str() {
        "queued" => "Queued: waiting for the crawler.".to_owned(),
        "running" => format!("Running: {settled} of {} pages done.", run.found),
        "done" => format!("Done: {} pages indexed, {} unchanged.", run.indexed, run.unchanged),
        "cancelled" => format!("Cancelled{}.", run.reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default()),
        other => {
            format!("{}{}.", capitalised(other), run.reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())
        }
    };
    let took = run.elapsed(now_ms());
    let current = run.current_url.clone().filter(|_| run.active());
    view! {
        <section class="c-card" id="run-progress" data-state=run.state.clone() aria-labelledby="run-progress-title">
            <h2 id="run-progress-title">"Latest run"</h2>
            <progress class="c-run-bar" role="progressbar" aria-label="Run progress" max=max value=value
                aria-valuemin="0" aria-valuemax=max aria-valuenow=value></progress>
            <p role="status">{headline}</p>
            <p class="c-hint">{format!("Started {} UTC · {took}", when(run.started_at))}</p>
            <dl class="c-facts c-run-counts">
                <dt>"Found"</dt><dd>{run.found}</dd>
                <dt>"Fetched"</dt><dd>{run.fetched}</dd>
                <dt>"Indexed"</dt><dd>{run.indexed}</dd>
                <dt>"Unchanged"</dt><dd>{run.unchanged}</dd>
                <dt>"Skipped"</dt><dd>{run.skipped}</dd>
                <dt>"Failed"</dt><dd>{run.failed}</dd>
                <dt>"Retired"</dt><dd>{run.retired}</dd>
            </dl>
            {current.map(|url| view! { <p class="c-hint c-clip">"Fetching " {url}</p> })}
        </section>
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
