//! `/admin/engage` (Agents → Engage): an agent's triggers — when a teaser bubble greets visitors
//! beside the launcher, or the panel opens by itself — with their showings and clicks, a form to
//! write one, and a preview of each on any address of the site.

use leptos::prelude::*;
use parley_widget::protocol::{HoursRule, TriggerShow, TriggerWhen, VisitorKind};

use super::api::engage::{engage_rules, preview_trigger, remove_trigger};
use super::engage_form::TriggerEditor;
use super::fields::ErrorLine;
use super::lists::AgentChoice;
use super::types::{EngageView, TriggerItem, TriggerPreview};

/// `/admin/engage`: choose an agent, then its triggers.
#[component]
pub fn EngagePage() -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let version = RwSignal::new(0u64);
    let view_of = Resource::new(
        move || (agent.get(), version.get()),
        |(agent, _)| async move { if agent.is_empty() { Ok(None) } else { engage_rules(agent).await.map(Some) } },
    );
    view! {
        <h1>"Engage"</h1>
        <p class="c-hint">
            "Triggers start the conversation: a teaser beside the launcher (a message and up to three buttons, each opening the chat and sending its text) or the chat opened with a greeting. The widget's loader decides in the visitor's browser; a page whose agent has no trigger loads nothing more for them. A visitor sees a trigger at most once a page and once every few days you choose, and no teaser again in a browser session after closing one."
        </p>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <AgentChoice id="e-agent" agent />
        </form>
        <Suspense fallback=|| view! { <p class="c-hint">"Loading…"</p> }>
            {move || view_of.get().map(|r| match r {
                Ok(Some(v)) => view! { <Triggers v version /> }.into_any(),
                Ok(None) => view! { <p class="c-hint">"Choose an agent."</p> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </Suspense>
    }
}

#[component]
fn Triggers(v: EngageView, version: RwSignal<u64>) -> impl IntoView {
    let agent_id = StoredValue::new(v.agent_id.clone());
    // The trigger being edited (`Some(None)`: a new one).
    let editing = RwSignal::new(None::<Option<TriggerItem>>);
    let previewing = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let rows = v.rules.clone();
    view! {
        <section class="c-card" id="triggers">
            <h2>"Triggers"</h2>
            {if rows.is_empty() {
                view! { <p class="c-hint">"No trigger yet: visitors are greeted only when they open the chat."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table">
                        <thead><tr>
                            <th scope="col">"Name"</th><th scope="col">"When"</th><th scope="col">"Shows"</th>
                            <th scope="col">"State"</th><th scope="col">"Shown (30 days)"</th><th scope="col">"Clicked"</th>
                            <th scope="col"><span class="c-sr">"Actions"</span></th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|item| {
                                let name = item.trigger.name.clone();
                                let for_edit = item.clone();
                                let for_remove = name.clone();
                                let for_preview = name.clone();
                                let remove = move |_| {
                                    let name = for_remove.clone();
                                    if !super::layout::confirm(&format!("Remove the trigger {name}?")) {
                                        return;
                                    }
                                    leptos::task::spawn_local(async move {
                                        match remove_trigger(agent_id.get_value(), name).await {
                                            Ok(()) => version.update(|v| *v += 1),
                                            Err(e) => error.set(Some(e.to_string())),
                                        }
                                    });
                                };
                                view! {
                                    <tr data-trigger=name.clone()>
                                        <td><code>{name.clone()}</code></td>
                                        <td>{when_text(&item.trigger.when)}</td>
                                        <td>{show_text(&item.trigger.show)}</td>
                                        <td>{if item.enabled { "On" } else { "Off" }}</td>
                                        <td>{item.shown}</td>
                                        <td>{item.clicked}</td>
                                        <td class="c-actions">
                                            <button type="button" on:click=move |_| editing.set(Some(Some(for_edit.clone())))>
                                                "Edit"<span class="c-sr">{format!(" {name}")}</span>
                                            </button>
                                            <button type="button" on:click=move |_| previewing.set(Some(for_preview.clone()))>
                                                "Preview"<span class="c-sr">{format!(" {name}")}</span>
                                            </button>
                                            <button type="button" class="c-danger" on:click=remove>
                                                "Remove"<span class="c-sr">{format!(" {name}")}</span>
                                            </button>
                                        </td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
            <ErrorLine error />
            <p><button type="button" id="trigger-new" on:click=move |_| editing.set(Some(None))>"New trigger"</button></p>
        </section>
        {move || previewing.get().map(|name| view! { <Preview agent_id=agent_id.get_value() name /> })}
        {move || editing.get().map(|item| view! { <TriggerEditor agent_id=agent_id.get_value() item version editing /> })}
    }
}

/// What a rule waits for, in a line.
fn when_text(w: &TriggerWhen) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &w.url {
        parts.push(format!("page {} {}", u.kind.words(), u.value));
    }
    if w.seconds > 0 {
        parts.push(format!("after {} s", w.seconds));
    }
    if w.scroll > 0 {
        parts.push(format!("scrolled {} %", w.scroll));
    }
    if w.exit_intent {
        parts.push("leaving".into());
    }
    if let Some(v) = w.visitor {
        parts.push(if v == VisitorKind::New { "new visitors".into() } else { "returning visitors".into() });
    }
    for c in &w.context {
        parts.push(format!("{} = {}", c.key, c.value));
    }
    if let Some(h) = w.hours {
        parts.push(if h == HoursRule::Open { "while open".into() } else { "while closed".into() });
    }
    if !w.languages.is_empty() {
        parts.push(w.languages.join(", "));
    }
    if w.manual {
        parts.push("Parley.trigger only".into());
    }
    if parts.is_empty() { "Every page, at once".into() } else { parts.join(" · ") }
}

fn show_text(s: &TriggerShow) -> String {
    match s {
        TriggerShow::Teaser { message, buttons } if buttons.is_empty() => format!("Teaser: {message}"),
        TriggerShow::Teaser { message, buttons } => format!("Teaser: {message} [{}]", buttons.join("] [")),
        TriggerShow::Open { greeting } => format!("Opens with: {greeting}"),
    }
}

/// Whether a trigger would show on an address, and a link that shows it there.
#[component]
fn Preview(agent_id: String, name: String) -> impl IntoView {
    let agent_id = StoredValue::new(agent_id);
    let name = StoredValue::new(name);
    let address = RwSignal::new(String::new());
    let result = RwSignal::new(None::<TriggerPreview>);
    let error = RwSignal::new(None::<String>);
    let check = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            match preview_trigger(agent_id.get_value(), name.get_value(), address.get_untracked()).await {
                Ok(p) => {
                    error.set(None);
                    result.set(Some(p));
                }
                Err(e) => {
                    result.set(None);
                    error.set(Some(e.to_string()));
                }
            }
        });
    };
    view! {
        <form class="c-card c-form" id="trigger-preview" on:submit=check aria-label="Preview">
            <h2>{format!("Preview {}", name.get_value())}</h2>
            <label for="p-address">"An address of your site"</label>
            <input id="p-address" type="url" placeholder="https://example.com/pricing" prop:value=address
                on:input=move |ev| address.set(event_target_value(&ev)) />
            <button type="submit">"Check"</button>
            <ErrorLine error />
            {move || result.get().map(|p| view! {
                <p role="status" id="preview-verdict" class=if p.passes { "c-ok" } else { "c-warn" }>
                    {if p.passes { "It can show on this page." } else { "It does not show on this page." }}
                </p>
                <ul>{p.notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                {match p.link {
                    Some(link) => view! {
                        <p><a href=link.clone() target="_blank" rel="noopener" id="preview-link">"Open the page with it shown"</a>
                        " (shows it at once, whatever its conditions; nothing is counted)"</p>
                    }.into_any(),
                    None => view! { <p class="c-hint">"Turn the trigger on to see it on the page."</p> }.into_any(),
                }}
            })}
        </form>
    }
}
