//! `/admin/login`.

use leptos::prelude::*;
use leptos_meta::Title;

use super::api::auth::{WRONG_CREDENTIALS, sign_in};
use super::fields::ErrorLine;
use super::layout::go_to;
use crate::console::error::ConsoleError;

/// `/admin/login`: the sign-in form.
#[component]
pub fn LoginPage() -> impl IntoView {
    // Read from the inputs when sent, not bound to signals: hydration would otherwise clear what
    // was typed before the page's WebAssembly had loaded.
    let email = NodeRef::<leptos::html::Input>::new();
    let password = NodeRef::<leptos::html::Input>::new();
    let value = |input: NodeRef<leptos::html::Input>| input.get_untracked().map(|i| i.value()).unwrap_or_default();
    // A form the browser sent itself (before hydration) comes back here saying why it was refused.
    let query = leptos_router::hooks::use_query_map().get_untracked();
    let refused = match query.get("refused").as_deref() {
        Some("credentials") => Some(WRONG_CREDENTIALS.to_owned()),
        Some("busy") => {
            let wait = query.get("wait").and_then(|w| w.parse::<u64>().ok()).unwrap_or(60);
            Some(ConsoleError::TooMany(wait).to_string())
        }
        _ => None,
    };
    let error = RwSignal::new(refused);
    let busy = RwSignal::new(false);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            match sign_in(value(email), value(password)).await {
                Ok(_) => go_to("/admin"),
                Err(e) => {
                    // The button first: once the error shows, Enter must submit again (a
                    // disabled default button makes the browser ignore Enter).
                    busy.set(false);
                    error.set(Some(e.to_string()));
                }
            }
        });
    };
    view! {
        <Title text="Sign in — Parley console" />
        <main class="c-login">
            // Sent by the browser itself until the page has hydrated: a plain form post that signs
            // in on the server (`post`: the password never goes in a URL).
            <form on:submit=submit method="post" action="/admin/sign-in" class="c-card" aria-labelledby="login-title">
                <h1 id="login-title">"Parley console"</h1>
                <label for="email">"Email"</label>
                <input id="email" name="email" type="email" autocomplete="username" required
                    node_ref=email />
                <label for="password">"Password"</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required
                    node_ref=password />
                <ErrorLine error />
                <button type="submit" class="c-primary" disabled=busy>"Sign in"</button>
                <p class="c-hint">"The first administrator's one-time password is in " <code>"first-admin-password.txt"</code> " in the data directory (the server's log says where) after the first start, or create one with " <code>"parley create-user"</code> "."</p>
            </form>
        </main>
    }
}
