//! The operator's copilot in a conversation (issue 43, part 7): the hand-over summary at the top
//! of the page, and beside the reply box a suggested reply from the knowledge base and "improve",
//! "shorten", "translate" for the operator's draft. Every result lands in the reply box to be
//! edited; nothing is sent without the operator pressing Send. The demo model's results say what
//! it did instead.

use leptos::prelude::*;

use super::api::copilot::{copilot_rewrite, copilot_suggest, copilot_summary};
use super::fields::ErrorLine;
use super::lists::when;
use super::types::{AssistItem, SummaryItem};

/// The summary written for the person the conversation was handed to, and "write again".
#[component]
pub fn HandoffSummary(id: String, summary: Option<SummaryItem>) -> impl IntoView {
    let id = StoredValue::new(id);
    let summary = RwSignal::new(summary);
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let again = move |_| {
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            match copilot_summary(id.get_value()).await {
                Ok(s) => summary.set(Some(s)),
                Err(e) => error.set(Some(e.to_string())),
            }
            busy.set(false);
        });
    };
    view! {
        <section class="c-card c-summary" id="handoff-summary" aria-labelledby="summary-title">
            <h2 id="summary-title">"Summary"</h2>
            {move || match summary.get() {
                Some(s) => view! {
                    <p class="c-summary-text">{s.text}</p>
                    <p class="c-hint">{format!("Written by {} · {}", s.model, when(s.created_at))}</p>
                    {s.note.map(|n| view! { <p class="c-hint c-demo-note">{n}</p> })}
                }.into_any(),
                None => view! {
                    <p class="c-hint">"No summary yet: one is written when the conversation is handed to a person."</p>
                }.into_any(),
            }}
            <ErrorLine error />
            <button type="button" id="summary-again" disabled=busy on:click=again>
                {move || if busy.get() { "Writing…" } else { "Write the summary again" }}
            </button>
        </section>
    }
}

/// The copilot's buttons under the reply box; each result replaces `text` (the draft).
#[component]
pub fn CopilotBar(id: StoredValue<String>, text: RwSignal<String>) -> impl IntoView {
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let last = RwSignal::new(None::<AssistItem>);
    let run = move |how: &'static str| {
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        error.set(None);
        let draft = text.get_untracked();
        leptos::task::spawn_local(async move {
            let outcome = match how {
                "suggest" => copilot_suggest(id.get_value()).await,
                how => copilot_rewrite(id.get_value(), draft, how.to_owned()).await,
            };
            match outcome {
                Ok(a) => {
                    text.set(a.text.clone());
                    last.set(Some(a));
                }
                Err(e) => error.set(Some(e.to_string())),
            }
            busy.set(false);
        });
    };
    let empty = move || text.with(|t| t.trim().is_empty());
    view! {
        <div class="c-copilot" role="group" aria-label="Copilot">
            <button type="button" id="copilot-suggest" disabled=busy on:click=move |_| run("suggest")>"Suggest a reply"</button>
            <button type="button" id="copilot-improve" disabled=move || busy.get() || empty() on:click=move |_| run("improve")>"Improve"</button>
            <button type="button" id="copilot-shorten" disabled=move || busy.get() || empty() on:click=move |_| run("shorten")>"Shorten"</button>
            <button type="button" id="copilot-translate" disabled=move || busy.get() || empty() on:click=move |_| run("translate")>"Translate to the visitor's language"</button>
            <p class="c-hint" aria-live="polite">
                {move || if busy.get() { "The copilot is writing…".to_owned() } else {
                    last.with(|l| l.as_ref().map(|a| format!("Draft from the copilot (US${:.4}): check it, then send.", a.cost_usd)).unwrap_or_default())
                }}
            </p>
            {move || last.get().and_then(|a| a.note).map(|n| view! { <p class="c-hint c-demo-note">{n}</p> })}
            {move || last.get().filter(|a| !a.citations.is_empty()).map(|a| view! {
                <ol class="c-copilot-sources" aria-label="Sources of the draft">
                    {a.citations.into_iter().map(|(title, url)| view! {
                        <li>{match url.filter(|u| u.starts_with("https://") || u.starts_with("http://")) {
                            Some(url) => view! { <a href=url target="_blank" rel="noopener">{title}</a> }.into_any(),
                            None => view! { <span>{title}</span> }.into_any(),
                        }}</li>
                    }).collect_view()}
                </ol>
            })}
            <ErrorLine error />
        </div>
    }
}
