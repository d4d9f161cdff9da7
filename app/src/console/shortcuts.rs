//! Keyboard shortcuts of the inbox (issue 43): `j` / `k` move through the conversation list
//! (Enter opens the one focused), `r` goes to the reply box (or "Take over"), `e` closes the
//! conversation shown (after its confirmation), `?` lists them. They are announced
//! (`aria-keyshortcuts`, the "Keyboard shortcuts" button) and optional: the list has a switch, kept
//! in this browser's storage. Keys typed into a field, or with Ctrl, Alt or Meta, are never taken.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Where this browser keeps the switch.
const STORAGE_KEY: &str = "parley.shortcuts";

/// The shortcuts, as the list shows them.
const KEYS: [(&str, &str); 6] = [
    ("j", "Next conversation in the list"),
    ("k", "Previous conversation in the list"),
    ("Enter", "Open the conversation focused"),
    ("r", "Reply (or take the conversation over)"),
    ("e", "Close the conversation shown"),
    ("?", "Show this list"),
];

/// What a key does, given the switch; `None`: not ours.
#[derive(Debug, PartialEq)]
enum Action {
    Move(i32),
    Reply,
    Close,
    Help,
}

fn action(key: &str, enabled: bool) -> Option<Action> {
    match key {
        // The list stays reachable when the single keys are off: it holds the switch.
        "?" => Some(Action::Help),
        _ if !enabled => None,
        "j" => Some(Action::Move(1)),
        "k" => Some(Action::Move(-1)),
        "r" => Some(Action::Reply),
        "e" => Some(Action::Close),
        _ => None,
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// A key typed into a field (or an editable element) is the field's.
fn in_a_field(ev: &web_sys::KeyboardEvent) -> bool {
    let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else { return false };
    matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT") || el.is_content_editable()
}

fn query(selector: &str) -> Option<web_sys::HtmlElement> {
    let doc = web_sys::window()?.document()?;
    doc.query_selector(selector).ok().flatten()?.dyn_into().ok()
}

/// Moves the focus `by` rows in the conversation list (the first row when none is focused).
fn move_in_list(by: i32) -> bool {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return false };
    let Ok(links) = doc.query_selector_all("#conversations tbody tr td:first-child a") else { return false };
    let count = links.length() as i32;
    if count == 0 {
        return false;
    }
    let active = doc.active_element();
    let at =
        (0..count).find(|i| links.item(*i as u32).is_some_and(|l| Some(&l) == active.as_ref().map(|a| a.as_ref())));
    let to = match at {
        Some(i) => (i + by).clamp(0, count - 1),
        None => 0,
    };
    links.item(to as u32).and_then(|l| l.dyn_into::<web_sys::HtmlElement>().ok()).is_some_and(|l| l.focus().is_ok())
}

#[component]
pub fn Shortcuts() -> impl IntoView {
    let open = RwSignal::new(false);
    let enabled = RwSignal::new(true);
    // Read in the browser once hydrated (the server renders them on).
    Effect::new(move |_| {
        let off = storage().and_then(|s| s.get_item(STORAGE_KEY).ok().flatten()).is_some_and(|v| v == "off");
        enabled.set(!off);
    });
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.default_prevented() {
            return;
        }
        if ev.key() == "Escape" && open.get_untracked() {
            open.set(false);
            return;
        }
        if in_a_field(&ev) {
            return;
        }
        let done = match action(&ev.key(), enabled.get_untracked()) {
            Some(Action::Help) => {
                open.update(|o| *o = !*o);
                true
            }
            Some(Action::Move(by)) => move_in_list(by),
            Some(Action::Reply) => query("#reply").or_else(|| query("#claim")).is_some_and(|el| el.focus().is_ok()),
            Some(Action::Close) => query("#close").map(|el| el.click()).is_some(),
            None => false,
        };
        if done {
            ev.prevent_default();
        }
    });
    on_cleanup(move || handle.remove());
    let toggle = move |ev: leptos::ev::Event| {
        let on = event_target_checked(&ev);
        enabled.set(on);
        if let Some(s) = storage() {
            let _ = if on { s.remove_item(STORAGE_KEY) } else { s.set_item(STORAGE_KEY, "off") };
        }
    };
    // The list takes the focus when it opens, so Escape and Tab work from there.
    let close_button = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if open.get()
            && let Some(b) = close_button.get()
        {
            let _ = b.focus();
        }
    });
    view! {
        <button type="button" class="c-link" id="shortcuts-button" aria-keyshortcuts="?" aria-haspopup="dialog"
            on:click=move |_| open.set(true)>"Keyboard shortcuts"</button>
        <Show when=move || open.get()>
            <div class="c-dialog" id="shortcuts" role="dialog" aria-modal="false" aria-labelledby="shortcuts-title">
                <h2 id="shortcuts-title">"Keyboard shortcuts"</h2>
                <dl class="c-shortcuts">
                    {KEYS.iter().map(|(key, what)| view! { <dt><kbd>{*key}</kbd></dt><dd>{*what}</dd> }).collect_view()}
                </dl>
                <label class="c-check">
                    <input type="checkbox" id="shortcuts-on" prop:checked=enabled on:change=toggle />
                    " Use the single-key shortcuts (j, k, r, e) in this browser"
                </label>
                <button type="button" node_ref=close_button on:click=move |_| open.set(false)>"Close"</button>
            </div>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_follow_the_switch_but_the_list_stays_reachable() {
        assert_eq!(action("j", true), Some(Action::Move(1)));
        assert_eq!(action("k", true), Some(Action::Move(-1)));
        assert_eq!(action("r", true), Some(Action::Reply));
        assert_eq!(action("e", true), Some(Action::Close));
        assert_eq!(action("x", true), None);
        assert_eq!(action("j", false), None);
        assert_eq!(action("?", false), Some(Action::Help));
    }
}
