//! *Try it* on an agent's versions page: the owner writes to the draft (or the published
//! version) as a visitor would, in a trial conversation kept between messages — the real turn,
//! seen by no one — and sees each answer with its tools, sources and the cost so far.

use leptos::prelude::*;

use super::api::answer_tests::{end_agent_preview, preview_agent};
use super::types::PreviewReply;

/// A message sent and its answer (or why there is none).
type Exchange = (String, Result<PreviewReply, String>);

#[component]
pub(super) fn TryIt(id: StoredValue<String>, has_draft: bool, published: i64) -> impl IntoView {
    let target = RwSignal::new(if has_draft { "draft" } else { "published" }.to_owned());
    let conversation = RwSignal::new(String::new());
    let log = RwSignal::new(Vec::<Exchange>::new());
    let text = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let start_over = move || {
        let old = conversation.get_untracked();
        conversation.set(String::new());
        log.set(Vec::new());
        if !old.is_empty() {
            leptos::task::spawn_local(async move {
                let _ = end_agent_preview(id.get_value(), old).await;
            });
        }
    };
    let send = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let message = text.get_untracked().trim().to_owned();
        if busy.get_untracked() || message.is_empty() {
            return;
        }
        busy.set(true);
        leptos::task::spawn_local(async move {
            let reply =
                preview_agent(id.get_value(), target.get_untracked(), conversation.get_untracked(), message.clone())
                    .await
                    .map_err(|e| e.to_string());
            if let Ok(r) = &reply {
                conversation.set(r.conversation_id.clone());
                text.set(String::new());
            }
            log.update(|l| l.push((message, reply)));
            busy.set(false);
        });
    };
    view! {
        <section class="c-card" aria-labelledby="v-try-h" id="v-try">
            <h2 id="v-try-h">"Try it"</h2>
            <p class="c-hint">"A trial conversation: the real turn with the agent's tools against your data, seen by "
                "no one (no inbox, webhook or mail; payments in the sandbox). The model calls cost what they cost. "
                "Start over deletes it."</p>
            <label for="v-try-target">"Talk to"</label>
            <select id="v-try-target" prop:value=move || target.get()
                on:change=move |ev| { target.set(event_target_value(&ev)); start_over(); }>
                {has_draft.then(|| view! { <option value="draft">"the draft"</option> })}
                <option value="published">{format!("version {published} (published)")}</option>
            </select>
            <ol class="c-try" id="v-try-log" aria-live="polite">
                {move || log.get().into_iter().map(|(message, reply)| view! {
                    <li>
                        <p>{format!("You: {message}")}</p>
                        {match reply {
                            Ok(r) => view! { <Reply r /> }.into_any(),
                            Err(e) => view! { <p class="c-error" role="alert">{e}</p> }.into_any(),
                        }}
                    </li>
                }).collect_view()}
            </ol>
            <form class="c-form" on:submit=send>
                <label for="v-try-text">"Message"</label>
                <textarea id="v-try-text" rows="2" prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))></textarea>
                <div class="c-actions">
                    <button type="submit" class="c-primary" id="v-try-send" disabled=move || busy.get()>
                        {move || if busy.get() { "Answering…" } else { "Send" }}
                    </button>
                    <button type="button" id="v-try-reset" on:click=move |_| start_over()>"Start over"</button>
                </div>
            </form>
        </section>
    }
}

/// An answer with what it did.
#[component]
fn Reply(r: PreviewReply) -> impl IntoView {
    let tools = if r.tools.is_empty() { "no tool".to_owned() } else { r.tools.join(", ") };
    let sources = (!r.sources.is_empty()).then(|| format!(" · sources: {}", r.sources.join("; ")));
    let person = r.handed_over.then_some(" · offered a person");
    view! {
        <blockquote class="c-answer">{r.answer}</blockquote>
        <p class="c-hint">{format!("{} · {tools}{}{} · ${:.6} so far · {} ms", r.status, sources.unwrap_or_default(),
            person.unwrap_or_default(), r.cost_usd, r.duration_ms)}</p>
    }
}
