//! The frame of every console page: who is signed in, the navigation, and the live feed.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::{A, Outlet, Redirect};
use serde::Deserialize;

use super::api::auth::{sign_out, who_am_i};
use super::search::SearchBox;
use super::types::Me;

/// One change announced by `/admin/feed`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct FeedEvent {
    pub conversation_id: String,
    pub agent_id: String,
    pub kind: String,
}

/// What pages use from the layout.
#[derive(Clone, Copy)]
pub struct ConsoleCtx {
    pub me: StoredValue<Me>,
    /// Bumped on every change that is not a typing notice: lists reload on it.
    pub changes: RwSignal<u64>,
    /// The last event, typing notices included.
    pub last: RwSignal<Option<FeedEvent>>,
}

pub fn console_ctx() -> ConsoleCtx {
    expect_context::<ConsoleCtx>()
}

/// Signed in, or sent to the sign-in page.
#[component]
pub fn ConsoleLayout() -> impl IntoView {
    let who = Resource::new_blocking(|| (), |_| who_am_i());
    view! {
        <Title text="Parley console" />
        <Suspense fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match who.await {
                    Ok(Some(me)) => view! { <Signed me /> }.into_any(),
                    Ok(None) => view! { <Redirect path="/admin/login" /> }.into_any(),
                    Err(e) => view! { <p class="c-error" role="alert">{format!("The console is unavailable: {e}")}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Signed(me: Me) -> impl IntoView {
    let ctx = ConsoleCtx { me: StoredValue::new(me.clone()), changes: RwSignal::new(0), last: RwSignal::new(None) };
    provide_context(ctx);
    listen_to_feed(ctx);
    super::notify_live::watch_notifications(ctx);
    let admin = me.is_admin();
    let leave = move |_| {
        leptos::task::spawn_local(async move {
            let _ = sign_out().await;
            go_to("/admin/login");
        });
    };
    view! {
        <div class="c-shell">
            <nav class="c-nav" aria-label="Console">
                <strong class="c-brand">"Parley"</strong>
                <A href="/admin" exact=true>"Dashboard"</A>
                <A href="/admin/conversations">"Conversations"</A>
                <A href="/admin/contacts">"Contacts"</A>
                <A href="/admin/leads">"Leads"</A>
                <A href="/admin/orders">"Orders"</A>
                <A href="/admin/unanswered">"Unanswered"</A>
                <A href="/admin/replies">"Saved replies"</A>
                <Show when=move || admin>
                    <A href="/admin/reports">"Reports"</A>
                    <A href="/admin/agents">"Agents"</A>
                    <A href="/admin/engage">"Engage"</A>
                    <A href="/admin/knowledge">"Knowledge"</A>
                    <A href="/admin/teams">"Teams"</A>
                    <A href="/admin/labels">"Labels"</A>
                    <A href="/admin/identity">"Known visitors"</A>
                    <A href="/admin/tokens">"MCP tokens"</A>
                    <A href="/admin/models">"Models & prices"</A>
                    <A href="/admin/experts">"Experts"</A>
                    <A href="/admin/tools">"Tools"</A>
                    <A href="/admin/webhooks">"Webhooks"</A>
                    <A href="/admin/hours">"Business hours"</A>
                    <A href="/admin/audit">"Audit log"</A>
                </Show>
                <span class="c-spacer"></span>
                <A href="/admin/notifications">"Notifications"</A>
                <SearchBox />
                <super::shortcuts::Shortcuts />
                <A href="/admin/account">{format!("{} ({})", me.name, me.role)}</A>
                <button type="button" class="c-link" on:click=leave>"Sign out"</button>
            </nav>
            <script src="/admin/console-notify.js" defer nonce=leptos::nonce::use_nonce()></script>
            <main class="c-main" id="main">
                <Outlet />
            </main>
        </div>
    }
}

/// Full navigation (a new session needs fresh server-rendered pages).
pub fn go_to(path: &str) {
    #[cfg(feature = "hydrate")]
    if let Some(w) = web_sys::window() {
        let _ = w.location().set_href(path);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = path;
}

/// Asks before something that cannot be undone.
pub fn confirm(question: &str) -> bool {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window().and_then(|w| w.confirm_with_message(question).ok()).unwrap_or(false)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = question;
        false
    }
}

/// Copies text to the clipboard.
pub fn copy_text(text: &str) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let Some(w) = web_sys::window() else { return };
        let clipboard = js_sys::Reflect::get(&w.navigator(), &"clipboard".into()).ok();
        if let Some(c) = clipboard.filter(|c| !c.is_undefined())
            && let Ok(f) = js_sys::Reflect::get(&c, &"writeText".into())
            && let Ok(f) = f.dyn_into::<js_sys::Function>()
        {
            let _ = f.call1(&c, &text.into());
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = text;
}

/// Opens `/admin/feed` (browser only) and turns its events into signals.
fn listen_to_feed(ctx: ConsoleCtx) {
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        use wasm_bindgen::JsCast;
        use wasm_bindgen::closure::Closure;
        let Ok(source) = web_sys::EventSource::new("/admin/feed") else { return };
        let on_change = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let Some(data) = ev.data().as_string() else { return };
            let Ok(event) = serde_json::from_str::<FeedEvent>(&data) else { return };
            if !event.kind.starts_with("typing") {
                ctx.changes.update(|n| *n += 1);
            }
            ctx.last.set(Some(event));
        });
        let _ = source.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
        // The console keeps the feed open while it is shown; leaving the page closes it.
        on_change.forget();
        std::mem::forget(source);
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = ctx;
}
