//! The team inbox in the console (issue 43): the list's views with live counts, and under a
//! conversation the assign box, its labels and the operators' private notes (a mention is written
//! `@Name`; the colleagues whose `@Name` the note holds are mentioned).

use leptos::prelude::*;

use super::api::inbox::{add_note, assign, colleagues, inbox_counts, labels, set_conversation_labels};
use super::fields::ErrorLine;
use super::layout::console_ctx;
use super::lists::query;
use super::types::{Colleague, ConversationDetail, LabelTag};

/// The views, in the order the tabs show them.
pub const VIEWS: &[(&str, &str)] =
    &[("mine", "Mine"), ("unassigned", "Unassigned"), ("my_teams", "My teams"), ("all", "All")];

/// Tabs for the views, each with its count (conversations waiting for or held by a person),
/// refreshed on every change in the feed.
#[component]
pub fn InboxViews(#[prop(into)] current: Signal<String>) -> impl IntoView {
    let ctx = console_ctx();
    let counts = Resource::new(move || ctx.changes.get(), |_| inbox_counts());
    let count = move |view: &str| {
        counts.get().and_then(Result::ok).map(|c| match view {
            "mine" => c.mine,
            "unassigned" => c.unassigned,
            "my_teams" => c.my_teams,
            _ => c.all,
        })
    };
    view! {
        <nav class="c-tabs" aria-label="Views">
            {VIEWS.iter().map(|(view, label)| {
                let href = format!("/admin/conversations{}", query(&[("view", view)]));
                let active = move || current.get() == *view || (current.get().is_empty() && *view == "all");
                view! {
                    <a href=href aria-current=move || active().then_some("page")>
                        {*label}
                        <span class="c-count" aria-live="polite">
                            // In a Transition: the server waits for the counts, so the page
                            // hydrates with the same text (read bare, hydration panicked).
                            <Transition>{move || count(view).map(|n| format!(" ({n})"))}</Transition>
                        </span>
                    </a>
                }
            }).collect_view()}
        </nav>
    }
}

/// A label as a chip: its name always, its colour as a mark beside it.
#[component]
pub fn LabelChip(label: LabelTag) -> impl IntoView {
    view! {
        <span class="c-label"><span class="c-label-dot" style=format!("background:{}", label.color) aria-hidden="true"></span>{label.name}</span>
    }
}

/// Under a conversation: whose it is (assign box), its labels, and the private notes.
#[component]
pub fn InboxPanel(
    id: String,
    /// The conversation as last fetched (its assignee, labels and notes follow it).
    current: RwSignal<ConversationDetail>,
    version: RwSignal<u64>,
    /// The note being written (kept by the page across reloads).
    body: RwSignal<String>,
) -> impl IntoView {
    let id = StoredValue::new(id);
    // Read only inside a Transition (the select's options, the labels, the `@` menu): the server
    // waits for them, so the hydrating browser draws what the server's HTML holds (read bare, a
    // resource that had arrived by hydration gave more nodes than the server wrote).
    let people = Resource::new(|| (), |_| colleagues());
    let all_labels = Resource::new(|| (), |_| labels());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let run = move |work: std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>>>>| {
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            if let Err(e) = work.await {
                error.set(Some(e));
            }
            busy.set(false);
            version.update(|v| *v += 1);
        });
    };
    let on_assign = move |ev: leptos::ev::Event| {
        let to = event_target_value(&ev);
        run(Box::pin(async move { assign(id.get_value(), Some(to)).await.map_err(|e| e.to_string()) }));
    };
    let on_ids = Memo::new(move |_| current.with(|d| d.item.labels.iter().map(|l| l.id.clone()).collect::<Vec<_>>()));
    let chosen = RwSignal::new(on_ids.get_untracked());
    // Another operator's change to the labels shows here.
    Effect::new(move |_| chosen.set(on_ids.get()));
    let toggle = move |label: String| {
        chosen.update(|c| {
            if let Some(at) = c.iter().position(|l| *l == label) {
                c.remove(at);
            } else {
                c.push(label);
            }
        });
        let list = chosen.get_untracked().join(",");
        run(Box::pin(async move { set_conversation_labels(id.get_value(), list).await.map_err(|e| e.to_string()) }));
    };
    let send_note = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let text = body.get_untracked();
        let everyone: Vec<Colleague> = people.get_untracked().and_then(Result::ok).unwrap_or_default();
        let mentions = mentioned(&text, &everyone).join(",");
        run(Box::pin(async move {
            add_note(id.get_value(), text, mentions).await.map(|_| body.set(String::new())).map_err(|e| e.to_string())
        }));
    };
    let assignee = Memo::new(move |_| current.with(|d| d.item.assignee_id.clone().unwrap_or_default()));
    let notes = Memo::new(move |_| current.with(|d| d.notes.clone()));
    view! {
        <section class="c-card c-inbox" aria-label="Assignment, labels and notes">
            <label for="assignee">"Assigned to"</label>
            <select id="assignee" disabled=busy on:change=on_assign>
                <option value="" selected=assignee.get_untracked().is_empty() prop:selected=move || assignee.get().is_empty()>"Nobody"</option>
                <Transition>
                    {move || people.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|p| {
                        let pid = p.id.clone();
                        let selected = assignee.get_untracked() == p.id;
                        view! { <option value=p.id.clone() selected=selected prop:selected=move || assignee.get() == pid>{format!("{} · {} · {}/{}", p.name, p.presence, p.open, p.max_open)}</option> }
                    }).collect_view()}
                </Transition>
            </select>
            <fieldset class="c-labels">
                <legend>"Labels"</legend>
                <Transition>{move || all_labels.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|l| {
                    let lid = l.id.clone();
                    let checked = chosen.with(|c| c.contains(&l.id));
                    view! {
                        <label>
                            <input type="checkbox" checked=checked disabled=busy on:change=move |_| toggle(lid.clone()) />
                            <LabelChip label=l />
                        </label>
                    }
                }).collect_view()}</Transition>
            </fieldset>
            <h2>"Private notes"</h2>
            <p class="c-hint">"Only operators see notes: never the visitor, the model or a webhook. Write @Name to tell a colleague."</p>
            <ol class="c-notes">
                <For each=move || notes.get() key=|n| n.id.clone() let:n>
                    <li class="c-msg c-msg-note"><span class="c-tag">"Private note"</span>" "<strong>{n.author}</strong>": "{n.body}</li>
                </For>
            </ol>
            <form class="c-note-box" on:submit=send_note>
                <label for="note">"Add a note"</label>
                <textarea id="note" maxlength="4000" prop:value=body on:input=move |ev| body.set(event_target_value(&ev))></textarea>
                // The `@` menu: colleagues whose name starts with what follows the last `@`.
                <Transition>{move || {
                    let everyone: Vec<Colleague> = people.get().and_then(Result::ok).unwrap_or_default();
                    let text = body.get();
                    let picks = suggestions(&text, &everyone);
                    (!picks.is_empty()).then(|| view! {
                        <div class="c-mentions" role="group" aria-label="Mention a colleague">
                            {picks.into_iter().map(|name| {
                                let label = format!("@{name}");
                                let pick = move |_| {
                                    body.update(|b| *b = complete(b, &name));
                                    focus_note();
                                };
                                view! { <button type="button" on:click=pick>{label}</button> }
                            }).collect_view()}
                        </div>
                    })
                }}</Transition>
                <button type="submit" disabled=busy>"Add note"</button>
            </form>
            <ErrorLine error />
        </section>
    }
}

/// The colleagues whose `@Name` the note holds (their ids).
pub fn mentioned(text: &str, people: &[Colleague]) -> Vec<String> {
    people.iter().filter(|p| text.contains(&format!("@{}", p.name))).map(|p| p.id.clone()).collect()
}

/// What follows the note's last `@` when it is being typed: the `@` starts the note or follows a
/// space, and at most 30 characters on one line follow it.
fn typed_mention(text: &str) -> Option<&str> {
    let at = text.rfind('@')?;
    let before_ok = text[..at].chars().next_back().is_none_or(char::is_whitespace);
    let after = &text[at + 1..];
    (before_ok && !after.contains('\n') && after.chars().count() <= 30).then_some(after)
}

/// The names (at most five) that complete the `@` being typed, case aside; none once a whole
/// name is written.
pub fn suggestions(text: &str, people: &[Colleague]) -> Vec<String> {
    let Some(typed) = typed_mention(text) else { return Vec::new() };
    let typed = typed.to_lowercase();
    if people.iter().any(|p| p.name.to_lowercase() == typed.trim_end()) && typed.ends_with(' ') {
        return Vec::new();
    }
    people
        .iter()
        .filter(|p| p.name.to_lowercase().starts_with(&typed) && p.name.to_lowercase() != typed)
        .map(|p| p.name.clone())
        .take(5)
        .collect()
}

/// The note with the `@` being typed completed as `@name `.
pub fn complete(text: &str, name: &str) -> String {
    match text.rfind('@') {
        Some(at) => format!("{}@{name} ", &text[..at]),
        None => format!("{text}@{name} "),
    }
}

/// Puts the caret back in the note box (browser only).
fn focus_note() {
    use wasm_bindgen::JsCast;
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("note"))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn people() -> Vec<Colleague> {
        ["Olive", "Oscar", "Dan"]
            .iter()
            .map(|n| Colleague {
                id: n.to_lowercase(),
                name: (*n).to_owned(),
                presence: "online".into(),
                open: 0,
                max_open: 5,
            })
            .collect()
    }

    #[test]
    fn the_at_menu_offers_matching_names_and_completes_them() {
        let p = people();
        assert_eq!(suggestions("ask @o", &p), ["Olive", "Oscar"]);
        assert_eq!(suggestions("ask @OS", &p), ["Oscar"]);
        assert!(suggestions("mail me@o", &p).is_empty(), "an address is no mention");
        assert!(suggestions("no at sign", &p).is_empty());
        assert!(suggestions("@Oscar ", &p).is_empty(), "a written name needs no menu");
        assert_eq!(complete("ask @os", "Oscar"), "ask @Oscar ");
        assert_eq!(mentioned(&complete("ask @os", "Oscar"), &p), ["oscar"]);
    }
}
