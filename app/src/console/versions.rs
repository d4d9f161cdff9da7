//! `/admin/agents/:id/versions`: the agent's draft, what it changes, publishing, and every
//! published version with what it changed and a way back to it.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::agent_form::CapabilityFields;
use super::api::versions::{
    agent_versions, discard_agent_draft, publish_agent_draft, restore_agent_version, save_agent_draft,
};
use super::error::ConsoleError;
use super::fields::{Errors, TextArea, TextInput, bind};
use super::lists::when;
use super::loaded::Loaded;
use super::preview::TryIt;
use super::types::{BehaviourDiff, DiffLine, FieldError, VersionItem, VersionOutcome, VersionsView};

/// The outcome line shared by the page's actions: `(done, sentence)`.
pub(super) type Outcome = RwSignal<Option<(bool, String)>>;

#[component]
pub fn AgentVersionsPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let reload = RwSignal::new(0u32);
    let data = Resource::new(move || (id(), reload.get()), |(id, _)| agent_versions(id));
    let outcome: Outcome = RwSignal::new(None);
    view! {
        <p>
            <A href=move || format!("/admin/agents/{}", id())>"← Agent"</A>
            " · "
            <A href=move || format!("/admin/agents/{}/tests", id())>"Answer tests"</A>
        </p>
        <Loaded resource=data let:data>
            <Versions data reload outcome />
        </Loaded>
    }
}

/// What an action's answer says: done or not, the sentence, the fields to correct.
pub(super) trait Said {
    fn said(self) -> (bool, String, Vec<FieldError>);
}

impl Said for VersionOutcome {
    fn said(self) -> (bool, String, Vec<FieldError>) {
        (self.ok, self.message, self.errors)
    }
}

/// Runs an action and shows how it went (the versions and the answer-tests pages); a done action
/// moves `reload` on.
pub(super) fn act<O: Said + 'static>(
    outcome: Outcome,
    errors: Option<Errors>,
    reload: RwSignal<u32>,
    call: impl std::future::Future<Output = Result<O, ConsoleError>> + 'static,
) {
    leptos::task::spawn_local(async move {
        match call.await.map(Said::said) {
            Ok((_, _, wrong)) if !wrong.is_empty() => {
                if let Some(errors) = errors {
                    errors.set(wrong);
                }
                outcome.set(Some((false, "Please correct the fields marked below.".into())));
            }
            Ok((ok, message, _)) => {
                if let Some(errors) = errors {
                    errors.set(vec![]);
                }
                outcome.set(Some((ok, message)));
                if ok {
                    reload.update(|n| *n += 1);
                }
            }
            Err(e) => outcome.set(Some((false, e.to_string()))),
        }
    });
}

#[component]
fn Versions(data: VersionsView, reload: RwSignal<u32>, outcome: Outcome) -> impl IntoView {
    let VersionsView { agent_id, agent_name, published, form, draft, history, tools } = data;
    let id = StoredValue::new(agent_id);
    let limit_tools = RwSignal::new(form.enabled_tools.is_some());
    let f = RwSignal::new(form);
    let errors: Errors = RwSignal::new(Vec::new());
    let note = RwSignal::new(String::new());
    let has_draft = draft.is_some();

    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let mut form = f.get_untracked();
        if !limit_tools.get_untracked() {
            form.enabled_tools = None;
        }
        act(outcome, Some(errors), reload, save_agent_draft(id.get_value(), form));
    };
    let discard = move |_| act(outcome, None, reload, discard_agent_draft(id.get_value()));
    let publish = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        act(outcome, None, reload, publish_agent_draft(id.get_value(), note.get_untracked()));
    };
    let line = move || {
        outcome.get().map(|(ok, text)| {
            if ok {
                view! { <p class="c-notice" role="status" id="v-outcome">{text}</p> }.into_any()
            } else {
                view! { <p class="c-error" role="alert" id="v-outcome">{text}</p> }.into_any()
            }
        })
    };
    let draft_state = match &draft {
        None => view! {
            <p>"No draft. Changes saved here wait in a draft; visitors keep getting version "
                {published} " until you publish."</p>
        }
        .into_any(),
        Some(d) => {
            let by = d.updated_by.clone().unwrap_or_else(|| "someone".into());
            let moved = (d.base_version != published).then(|| view! {
                <p class="c-warn" role="status">{format!(
                    "Version {published} was published after this draft started from version {}: publishing the draft replaces it.",
                    d.base_version
                )}</p>
            });
            view! {
                <p id="v-draft-state">{format!("Draft saved by {by}, {} (UTC). Visitors get version {published}.", when(d.updated_at))}</p>
                {moved}
            }
            .into_any()
        }
    };
    let compare = draft.map(|d| {
        let diff = d.diff;
        let same = diff.fields.is_empty() && diff.prompt.is_empty();
        view! {
            <section class="c-card" aria-labelledby="v-compare-h" id="v-compare">
                <h2 id="v-compare-h">{format!("The draft compared with version {published}")}</h2>
                {if same {
                    view! { <p>"The draft does what the published version does."</p> }.into_any()
                } else {
                    view! { <DiffView diff before="Published" after="Draft" /> }.into_any()
                }}
                <form class="c-form" on:submit=publish>
                    <TextInput id="v-note" label="What changed and why (optional, kept in the history)" field="note"
                        value=super::fields::Bound::new(move || note.get(), move |v| note.set(v)) errors />
                    <div class="c-actions">
                        <button type="submit" class="c-primary" id="v-publish">"Publish the draft"</button>
                        <button type="button" id="v-discard" on:click=discard>"Discard the draft"</button>
                    </div>
                </form>
            </section>
        }
    });

    view! {
        <h1>{format!("Versions: {agent_name}")}</h1>
        {line}
        <section class="c-card" aria-labelledby="v-draft-h">
            <h2 id="v-draft-h">"Draft"</h2>
            {draft_state}
            <form class="c-form" on:submit=save novalidate=true>
                <CapabilityFields f tools limit_tools errors />
                <TextInput id="v-model" label="Model" field="model" value=bind!(f.model) errors />
                <TextInput id="v-fallback" label="Fallback model (optional)" field="fallback_model"
                    value=bind!(f.fallback_model) errors />
                <TextArea id="v-prompt" label="System prompt" field="system_prompt" value=bind!(f.system_prompt) errors
                    rows="10" />
                <button type="submit" class="c-primary" id="v-save">
                    {if has_draft { "Save the draft" } else { "Start a draft" }}
                </button>
            </form>
        </section>
        {compare}
        <TryIt id has_draft published />
        <section class="c-card" aria-labelledby="v-history-h">
            <h2 id="v-history-h">"Published versions"</h2>
            <ol class="c-versions" id="v-history" reversed=true>
                {history.into_iter().map(|v| view! { <VersionRow v published reload outcome id /> }).collect_view()}
            </ol>
        </section>
    }
}

/// One version in the history: who, when, why, what changed (folded), and the way back.
#[component]
fn VersionRow(
    v: VersionItem,
    published: i64,
    reload: RwSignal<u32>,
    outcome: Outcome,
    id: StoredValue<String>,
) -> impl IntoView {
    let n = v.version;
    let live = n == published;
    let who = v.published_by.clone().unwrap_or_else(|| "—".into());
    let at =
        if v.published_at > 0 { format!("{} (UTC)", when(v.published_at)) } else { "before versions were kept".into() };
    let changed = (!v.changes.is_empty()).then(|| format!("Changed: {}.", v.changes));
    let restore = move |_| act(outcome, None, reload, restore_agent_version(id.get_value(), n));
    let has_diff = !(v.diff.fields.is_empty() && v.diff.prompt.is_empty());
    view! {
        <li id=format!("v-{n}") class:c-live=live>
            <p>
                <strong>{format!("Version {n}")}</strong>
                {live.then(|| view! { " " <span class="c-badge">"published"</span> })}
                {format!(" · {at} · {who} · {}", v.note)}
            </p>
            {changed.map(|c| view! { <p>{c}</p> })}
            {has_diff.then(|| view! {
                <details>
                    <summary>{format!("What version {n} changed")}</summary>
                    <DiffView diff=v.diff.clone() before="Before" after=format!("Version {n}") />
                </details>
            })}
            {(!live).then(|| view! {
                <button type="button" on:click=restore aria-label=format!("Restore version {n}")>"Restore"</button>
            })}
        </li>
    }
}

/// Settings before and after, and the instructions line by line (added and removed marked).
#[component]
fn DiffView(diff: BehaviourDiff, #[prop(into)] before: String, #[prop(into)] after: String) -> impl IntoView {
    let BehaviourDiff { fields, prompt } = diff;
    let table = (!fields.is_empty()).then(|| view! {
        <table class="c-table c-diff-fields">
            <thead><tr><th scope="col">"Setting"</th><th scope="col">{before}</th><th scope="col">{after}</th></tr></thead>
            <tbody>
                {fields.into_iter().map(|c| view! {
                    <tr><th scope="row">{c.label}</th><td><del>{c.before}</del></td><td><ins>{c.after}</ins></td></tr>
                }).collect_view()}
            </tbody>
        </table>
    });
    let lines = (!prompt.is_empty()).then(|| {
        view! {
            <p>"System prompt, line by line (+ added, − removed):"</p>
            <DiffLines lines=prompt />
        }
    });
    view! { {table} {lines} }
}

/// Lines of two texts compared: added and removed marked (`+` / `−`, `<ins>` / `<del>`).
#[component]
pub(super) fn DiffLines(lines: Vec<DiffLine>) -> impl IntoView {
    view! {
        <pre class="c-diff">
            {lines.into_iter().map(|l| match l.kind.as_str() {
                "added" => view! { <ins class="c-diff-add">{format!("+ {}\n", l.text)}</ins> }.into_any(),
                "removed" => view! { <del class="c-diff-del">{format!("− {}\n", l.text)}</del> }.into_any(),
                _ => view! { <span>{format!("  {}\n", l.text)}</span> }.into_any(),
            }).collect_view()}
        </pre>
    }
}
