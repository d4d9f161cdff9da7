//! The console's browser bundle: `hydrate()`, which Leptos's hydration script calls, makes the
//! server-rendered console and pages live. Everything it runs is `parley-app`'s; this crate is
//! only the entry, so that the app stays an rlib and its wasm build has a crate of its own.

// The console's view types are deep: their layouts are computed in this crate too.
#![recursion_limit = "256"]

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(parley_app::App);
}
