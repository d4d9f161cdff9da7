//! The operator's reply box under a conversation they hold (its draft, `text`, is kept by the page
//! across reloads): saved replies behind `/`, and a "typing" notice to the visitor at most every
//! three seconds.

use leptos::prelude::*;
use parley_widget::blocks;

use super::answers::slash_matches;
use super::api::answers::conversation_replies;
use super::api::conversations::{operator_typing, reply};
use super::copilot::CopilotBar;
use super::fields::ErrorLine;
use super::types::SavedReplyItem;

#[component]
pub fn ReplyBox(id: String, version: RwSignal<u64>, text: RwSignal<String>) -> impl IntoView {
    let id = StoredValue::new(id);
    let replies = saved_replies(id);
    let error = RwSignal::new(None::<String>);
    let typing_sent = StoredValue::new(0_i64);
    // The `/` menu: the replies matching what follows the slash, the one picked, and whether
    // Escape closed it (until the text changes).
    let active = RwSignal::new(0usize);
    let dismissed = RwSignal::new(false);
    let matches = move || {
        if dismissed.get() {
            return Vec::new();
        }
        replies.with(|all| {
            text.with(|t| slash_matches(t, all).map(|m| m.into_iter().cloned().collect()).unwrap_or_default())
        })
    };
    let pick = move |body: String| {
        text.set(body);
        dismissed.set(true);
    };
    let on_input = move |ev| {
        text.set(event_target_value(&ev));
        dismissed.set(false);
        active.set(0);
        let now = blocks::now_ms();
        // At most one "typing" notice every 3 seconds.
        if now - typing_sent.get_value() > 3000 {
            typing_sent.set_value(now);
            leptos::task::spawn_local(async move {
                let _ = operator_typing(id.get_value(), true).await;
            });
        }
    };
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        let found = matches();
        if found.is_empty() {
            return;
        }
        match menu_key(&ev.key(), found.len(), active.get_untracked()) {
            MenuKey::Move(to) => {
                ev.prevent_default();
                active.set(to);
            }
            MenuKey::Pick(at) => {
                ev.prevent_default();
                pick(found[at].body.clone());
            }
            MenuKey::Close => dismissed.set(true),
            MenuKey::Other => {}
        }
    };
    let send = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = text.get_untracked();
        if body.trim().is_empty() {
            return;
        }
        error.set(None);
        leptos::task::spawn_local(async move {
            match reply(id.get_value(), body).await {
                Ok(_) => {
                    text.set(String::new());
                    typing_sent.set_value(0);
                    let _ = operator_typing(id.get_value(), false).await;
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    let open = move || !matches().is_empty();
    view! {
        <form class="c-reply" on:submit=send>
            <label for="reply">"Your reply to the visitor"</label>
            <p class="c-hint" id="reply-hint">"Type / to insert a saved reply."</p>
            <textarea id="reply" aria-keyshortcuts="r" rows="3" prop:value=text on:input=on_input on:keydown=on_keydown maxlength="4000"
                aria-describedby="reply-hint" aria-autocomplete="list" aria-controls="reply-menu"
                aria-activedescendant=move || open().then(|| format!("reply-option-{}", active.get()))></textarea>
            <ul id="reply-menu" class="c-reply-menu" role="listbox" aria-label="Saved replies" hidden=move || !open()>
                {move || matches().into_iter().enumerate().map(|(i, r)| {
                    let body = r.body.clone();
                    view! {
                        <li id=format!("reply-option-{i}") role="option" aria-selected=move || (active.get() == i).to_string()
                            on:mousedown=move |ev| { ev.prevent_default(); pick(body.clone()); }>
                            <code>{format!("/{}", r.shortcut)}</code>" "{r.body.chars().take(80).collect::<String>()}
                        </li>
                    }
                }).collect_view()}
            </ul>
            <ErrorLine error />
            <button type="submit" class="c-primary">"Send"</button>
            <CopilotBar id text />
        </form>
    }
}

/// The saved replies the `/` menu offers, read in the browser once the box is shown (a resource
/// here, inside the transcript's own, would break hydration).
fn saved_replies(id: StoredValue<String>) -> RwSignal<Vec<SavedReplyItem>> {
    let replies = RwSignal::new(Vec::new());
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            if let Ok(list) = conversation_replies(id.get_value()).await {
                replies.set(list);
            }
        });
    });
    replies
}

/// What a key does in the open `/` menu of `len` replies with `active` picked.
#[derive(Debug, PartialEq)]
enum MenuKey {
    /// Pick another one (arrows, wrapping round).
    Move(usize),
    /// Insert this one (Enter, Tab).
    Pick(usize),
    /// Close the menu (Escape).
    Close,
    /// Not the menu's (typing goes on).
    Other,
}

fn menu_key(key: &str, len: usize, active: usize) -> MenuKey {
    match key {
        _ if len == 0 => MenuKey::Other,
        "ArrowDown" => MenuKey::Move((active + 1) % len),
        "ArrowUp" => MenuKey::Move((active + len - 1) % len),
        "Enter" | "Tab" => MenuKey::Pick(active.min(len - 1)),
        "Escape" => MenuKey::Close,
        _ => MenuKey::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_keys_wrap_pick_and_close() {
        assert_eq!(menu_key("ArrowDown", 3, 2), MenuKey::Move(0));
        assert_eq!(menu_key("ArrowUp", 3, 0), MenuKey::Move(2));
        assert_eq!(menu_key("Enter", 3, 7), MenuKey::Pick(2));
        assert_eq!(menu_key("Tab", 3, 1), MenuKey::Pick(1));
        assert_eq!(menu_key("Escape", 3, 1), MenuKey::Close);
        assert_eq!(menu_key("a", 3, 1), MenuKey::Other);
        assert_eq!(menu_key("Enter", 0, 0), MenuKey::Other);
    }
}
