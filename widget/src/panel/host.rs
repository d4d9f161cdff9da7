//! Talking to the host page (the loader) with `postMessage`: only to and from the host origin the
//! server validated for this embed, never `"*"`.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::MessageEvent;

use super::model::Panel;

/// Sends `{type}` to the host page.
pub fn post(panel: &Panel, kind: &str) {
    let Some(origin) = panel.host_origin.get() else { return };
    let Some(window) = web_sys::window() else { return };
    let Ok(Some(parent)) = window.parent() else { return };
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &"type".into(), &kind.into());
    let _ = parent.post_message(&message, &origin);
}

/// Sends `{type, ...fields}` to the host page.
pub fn post_with(panel: &Panel, kind: &str, fields: &serde_json::Value) {
    let Some(origin) = panel.host_origin.get() else { return };
    let Some(window) = web_sys::window() else { return };
    let Ok(Some(parent)) = window.parent() else { return };
    let mut message = fields.clone();
    message["type"] = kind.into();
    let Some(value) = crate::json::to_js(&message) else { return };
    let _ = parent.post_message(&value, &origin);
}

/// Tells the host page's `Parley.on(name, …)` handlers: `{type: "parley:event", name, detail}`.
pub fn post_event(panel: &Panel, name: &str, detail: &serde_json::Value) {
    let Some(origin) = panel.host_origin.get() else { return };
    let Some(window) = web_sys::window() else { return };
    let Ok(Some(parent)) = window.parent() else { return };
    let message = serde_json::json!({ "type": "parley:event", "name": name, "detail": detail });
    let Some(value) = crate::json::to_js(&message) else { return };
    let _ = parent.post_message(&value, &origin);
}

/// A string field of a host message.
fn field(data: &wasm_bindgen::JsValue, name: &str) -> Option<String> {
    js_sys::Reflect::get(data, &name.into()).ok().and_then(|v| v.as_string())
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
        if panel.lead_open.get() {
            panel.lead_open.set(false);
        } else {
            post(&panel, "parley:close");
        }
    });
    let _ = window.add_event_listener_with_callback("keydown", handler.as_ref().unchecked_ref());
    handler.forget();
}

/// Listens for the host's commands: `parley:reset`, `parley:focus` / `parley:open`,
/// `parley:send` (`Parley.open({message})`), `parley:identify`, `parley:logout`,
/// `parley:context` (`Parley.setContext`), `parley:greet` (a trigger's greeting), `parley:page`
/// (the site page's address) and `parley:return` (a return mail's link was followed).
pub fn listen(panel: Panel, focus: impl Fn() + 'static) {
    let Some(origin) = panel.host_origin.get() else { return };
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
        let data = event.data();
        match field(&data, "type").as_deref() {
            Some("parley:reset") => panel.reset(),
            Some("parley:focus") | Some("parley:open") => {
                panel.set_shown(true);
                focus();
            }
            Some("parley:hidden") => panel.set_shown(false),
            Some("parley:send") => {
                panel.set_shown(true);
                if let Some(text) = field(&data, "message").filter(|t| !t.trim().is_empty()) {
                    panel.send(text);
                }
                focus();
            }
            Some("parley:identify") => {
                if let Some(token) = field(&data, "token").filter(|t| !t.trim().is_empty()) {
                    panel.identify(token);
                }
            }
            Some("parley:logout") => panel.logout(),
            Some("parley:greet") => {
                if let Some(text) = field(&data, "text").filter(|t| !t.trim().is_empty()) {
                    panel.greet(text);
                }
            }
            Some("parley:page") => {
                panel.page_url.set_value(field(&data, "url").filter(|u| u.len() <= 2048));
            }
            Some("parley:return") => {
                if let Some(token) = field(&data, "token").filter(|t| !t.is_empty() && t.len() <= 100) {
                    panel.follow_return(token);
                }
            }
            Some("parley:context") => {
                // JSON text, so that what crosses is exactly what the host checked the size of.
                let context = field(&data, "context").and_then(|t| crate::json::from_str(&t).ok());
                panel.page_context.set_value(context.filter(|c: &serde_json::Value| !c.is_null()));
            }
            _ => {}
        }
    });
    let _ = window.add_event_listener_with_callback("message", handler.as_ref().unchecked_ref());
    handler.forget();
}
