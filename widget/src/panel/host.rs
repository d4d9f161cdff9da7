//! Talking to the host page (the loader) with `postMessage`: only to and from the host origin the
//! server validated for this embed, never `"*"`.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::MessageEvent;

use super::model::Panel;

/// Sends `{type}` to the host page.
pub fn post(panel: &Panel, kind: &str) {
    let Some(origin) = panel.host_origin.get_value() else { return };
    let Some(window) = web_sys::window() else { return };
    let Ok(Some(parent)) = window.parent() else { return };
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &"type".into(), &kind.into());
    let _ = parent.post_message(&message, &origin);
}

/// When the page goes away (the visitor leaves or closes the tab) while an answer is being
/// written, the answer is stopped: its upstream calls and tools end at once, the partial text is
/// kept as `stopped`. (A reload stops it too; a dropped connection does not, it resumes.)
pub fn on_leave(panel: Panel) {
    let Some(window) = web_sys::window() else { return };
    let handler = Closure::<dyn Fn()>::new(move || panel.leave());
    let _ = window.add_event_listener_with_callback("pagehide", handler.as_ref().unchecked_ref());
    handler.forget();
}

/// Escape closes the panel (the host page hides it and gives the focus back to its launcher);
/// an open lead form is closed first.
pub fn close_on_escape(panel: Panel) {
    let Some(window) = web_sys::window() else { return };
    let handler = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(move |event: web_sys::KeyboardEvent| {
        if event.key() != "Escape" || event.is_composing() {
            return;
        }
        if panel.lead_open.get_untracked() {
            panel.lead_open.set(false);
        } else {
            post(&panel, "parley:close");
        }
    });
    let _ = window.add_event_listener_with_callback("keydown", handler.as_ref().unchecked_ref());
    handler.forget();
}

/// Listens for the host's commands (`parley:reset`, `parley:focus`).
pub fn listen(panel: Panel, focus: impl Fn() + 'static) {
    let Some(origin) = panel.host_origin.get_value() else { return };
    let Some(window) = web_sys::window() else { return };
    let parent = window.parent().ok().flatten();
    let handler = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        if event.origin() != origin {
            return;
        }
        // Only the window that embeds us.
        let from_parent = match (&parent, event.source()) {
            (Some(p), Some(source)) => js_sys::Object::is(p.as_ref(), source.as_ref()),
            _ => false,
        };
        if !from_parent {
            return;
        }
        let kind = js_sys::Reflect::get(&event.data(), &"type".into()).ok().and_then(|v| v.as_string());
        match kind.as_deref() {
            Some("parley:reset") => panel.reset(),
            Some("parley:focus") | Some("parley:open") => focus(),
            _ => {}
        }
    });
    let _ = window.add_event_listener_with_callback("message", handler.as_ref().unchecked_ref());
    handler.forget();
}
