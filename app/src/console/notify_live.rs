//! The console's live notifications (issue 43): the tab title shows how many notifications are
//! unread; when that number grows on a feed event (something that concerns this user: every
//! notification is one user's), a short tone and a desktop notification, if the user wants them
//! in the console and allowed desktop notifications. The browser side is the small script
//! `/admin/console-notify.js` (no audio file, no extra wasm).

#[cfg(feature = "hydrate")]
use leptos::prelude::*;

#[cfg(feature = "hydrate")]
use super::api::notify::unread_count;
use super::layout::ConsoleCtx;

/// Calls `window.parleyNotify[name](...args)` (browser only); what it returned.
#[cfg(feature = "hydrate")]
pub fn call(name: &str, args: &[wasm_bindgen::JsValue]) -> Option<wasm_bindgen::JsValue> {
    use wasm_bindgen::JsCast;
    let window = web_sys::window()?;
    let helper = js_sys::Reflect::get(&window, &"parleyNotify".into()).ok().filter(|h| h.is_object())?;
    let f = js_sys::Reflect::get(&helper, &name.into()).ok()?.dyn_into::<js_sys::Function>().ok()?;
    let array = args.iter().cloned().collect::<js_sys::Array>();
    f.apply(&helper, &array).ok()
}

/// Awaits `window.parleyNotify[name](...args)`'s promise: its value as text, or its error.
#[cfg(feature = "hydrate")]
pub async fn call_async(name: &str, args: &[wasm_bindgen::JsValue]) -> Result<String, String> {
    let Some(promise) = call(name, args) else { return Err("The page's notification script is not loaded.".into()) };
    let promise = js_sys::Promise::resolve(&promise);
    match wasm_bindgen_futures::JsFuture::from(promise).await {
        Ok(v) => Ok(v.as_string().unwrap_or_default()),
        Err(e) => Err(js_sys::Reflect::get(&e, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_else(|| "The browser refused.".into())),
    }
}

/// `(N) title` in the tab, with any earlier count taken off first.
#[cfg(feature = "hydrate")]
fn set_title_count(count: i64) {
    // (Through `Reflect`: the console's web-sys has no `Document` feature to build for this.)
    let Some(window) = web_sys::window() else { return };
    let Ok(document) = js_sys::Reflect::get(&window, &"document".into()) else { return };
    let title = js_sys::Reflect::get(&document, &"title".into()).ok().and_then(|t| t.as_string()).unwrap_or_default();
    let bare = match title.strip_prefix('(').and_then(|t| t.split_once(") ")) {
        Some((n, rest)) if n.chars().all(|c| c.is_ascii_digit()) => rest.to_owned(),
        _ => title,
    };
    let titled = if count > 0 { format!("({count}) {bare}") } else { bare };
    let _ = js_sys::Reflect::set(&document, &"title".into(), &titled.into());
}

/// Keeps the unread count (the tab title) current and tells the user of new notifications.
///
/// Fetched in a task of its own on each feed event, not through a resource: a resource read
/// here would hold the console's outer `<Suspense>` on every event, which takes the whole page
/// out of the document and puts it back (the focused box lost the focus, and the operator's next
/// keys went to the page).
pub fn watch_notifications(ctx: ConsoleCtx) {
    #[cfg(feature = "hydrate")]
    {
        let unread = RwSignal::new(None);
        let asked = StoredValue::new(0u64);
        Effect::new(move |_| {
            ctx.changes.track();
            let n = asked.get_value() + 1;
            asked.set_value(n);
            leptos::task::spawn_local(async move {
                let answer = unread_count().await;
                if let Ok(view) = answer
                    && asked.try_get_value() == Some(n)
                {
                    unread.try_set(Some(view));
                }
            });
        });
        let last = StoredValue::new(None::<i64>);
        let path = leptos_router::hooks::use_location().pathname;
        Effect::new(move |_| {
            // A page's own title replaces ours on navigation: put the count back after it.
            path.track();
            let Some(view) = unread.get() else { return };
            set_timeout(move || set_title_count(view.count), std::time::Duration::from_millis(50));
            let before = last.get_value();
            last.set_value(Some(view.count));
            if view.in_console && before.is_some_and(|b| view.count > b) {
                call("beep", &[]);
                let body = format!("{} unread", view.count);
                call("show", &["Parley: new notification".into(), body.into(), "/admin/notifications".into()]);
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = ctx;
}
