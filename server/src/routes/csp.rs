//! The Content-Security-Policy of Parley's own HTML pages (home, the embed page `/embed/{key}`,
//! the console `/admin/…`, the 404 page), built in this one place.
//!
//! Every response gets a fresh nonce (Leptos's [`Nonce`]: 128 bits from `rand`, base64). The
//! middleware puts it in the request's extensions; [`provide_nonce`] hands it to Leptos, whose
//! hydration script and streamed `<script>` chunks then carry `nonce="…"`; the header names the
//! same nonce. The embed page (plain HTML, [`super::embed_page`]) has no inline script to run: its
//! module comes from `/widget/…` and its configuration is a JSON data block. No other inline
//! script may run: an injected `<script>` or `onclick=` is refused by the browser even if it got
//! past the markdown sanitizer.
//!
//! What the pages load, and so what the policy allows: scripts and WebAssembly from Parley
//! (`/pkg/…` for the console, `/widget/…` for the panel; `'wasm-unsafe-eval'` to compile them),
//! inline styles (the theme colour's `style=`), images from Parley (`/admin/attachments`), `data:`
//! (the payment QR code) and `blob:` (images the visitor is sending), `fetch`/`EventSource` to
//! Parley (the chat's SSE streams, the console's feed) and to `blob:` (the panel reads a chosen
//! image's bytes back from its `blob:` URL to upload them), the console's preview iframe of
//! `/embed/{key}` (same origin).
//!
//! Who may frame a page is unchanged: the embed page names the agent's allowed origins
//! ([`super::embed::frame_ancestors`]), the console `'none'`, the home page says nothing.
//! A response that already carries a policy of its own (an attachment) keeps it.

use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use leptos::nonce::Nonce;
use leptos::prelude::{provide_context, use_context};
use parley_app::server::state::AppState;

/// Which of Parley's pages a request is for: it decides who may frame it.
enum Page {
    /// `/embed/{key}`: the agent's allowed origins.
    Embed(String),
    /// `/admin…`: never framed (clickjacking).
    Console,
    /// The home page, and anything else the Leptos app answers (its 404 page, its files).
    Other,
}

impl Page {
    fn of(path: &str) -> Page {
        if let Some(key) = path.strip_prefix("/embed/") {
            Page::Embed(key.trim_end_matches('/').to_owned())
        } else if path.starts_with("/admin") {
            Page::Console
        } else {
            Page::Other
        }
    }
}

/// Middleware on the Leptos pages: makes the response's nonce, refuses an embed page its host may
/// not frame, and sends the policy.
pub async fn page_policy(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let page = Page::of(request.uri().path());
    let frame_ancestors = match &page {
        Page::Embed(key) => match super::embed::frame_ancestors(&state, key, request.uri().query()).await {
            Ok(ancestors) => Some(ancestors),
            Err(refused) => return refused,
        },
        Page::Console => Some("'none'".to_owned()),
        Page::Other => None,
    };
    let nonce = Nonce::new();
    request.extensions_mut().insert(nonce.clone());
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        let value = policy(&nonce, frame_ancestors.as_deref(), live_reload());
        match HeaderValue::from_str(&value) {
            Ok(value) => {
                headers.insert(header::CONTENT_SECURITY_POLICY, value);
            }
            // Cannot happen (the nonce is base64, origins are filtered); say so rather than send none.
            Err(_) => tracing::error!(policy = %value, "the content security policy is not a valid header"),
        }
    }
    match page {
        Page::Console => {
            headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        }
        Page::Embed(_) => {
            headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        }
        Page::Other => {}
    }
    response
}

/// Leptos's per-request context hook: the nonce [`page_policy`] made, for the hydration script and
/// streamed chunks (it replaces the one `leptos_axum` makes on its own, which no header names).
pub fn provide_nonce() {
    if let Some(nonce) = use_context::<Parts>().and_then(|parts| parts.extensions.get::<Nonce>().cloned()) {
        provide_context(nonce);
    }
}

/// `cargo leptos watch`: Leptos's `<AutoReload>` opens a WebSocket on another port.
fn live_reload() -> bool {
    std::env::var_os("LEPTOS_WATCH").is_some()
}

/// The policy of a page with this nonce; `frame_ancestors` is a CSP source list (none: the
/// directive is left out, as before this policy existed).
fn policy(nonce: &str, frame_ancestors: Option<&str>, live_reload: bool) -> String {
    let connect = if live_reload { "'self' blob: ws: wss:" } else { "'self' blob:" };
    let mut policy = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https:; connect-src {connect}; \
         font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'"
    );
    if let Some(ancestors) = frame_ancestors {
        policy.push_str("; frame-ancestors ");
        policy.push_str(ancestors);
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_names_the_nonce_and_who_may_frame() {
        let p = policy("abc_-12", Some("'self' https://shop.example"), false);
        assert!(p.starts_with("default-src 'self'; script-src 'self' 'nonce-abc_-12' 'wasm-unsafe-eval';"), "{p}");
        // Inline script only by nonce; 'unsafe-inline' is for styles alone.
        assert_eq!(p.matches("'unsafe-inline'").count(), 1);
        assert!(p.contains("style-src 'self' 'unsafe-inline';"), "{p}");
        assert!(p.ends_with("; frame-ancestors 'self' https://shop.example"), "{p}");
        assert!(p.contains("connect-src 'self' blob:;"), "{p}");
        assert!(!policy("n", None, false).contains("frame-ancestors"));
        assert!(policy("n", None, true).contains("connect-src 'self' blob: ws: wss:;"));
    }

    #[test]
    fn pages_are_told_apart_by_path() {
        assert!(matches!(Page::of("/embed/demo-help/"), Page::Embed(k) if k == "demo-help"));
        assert!(matches!(Page::of("/admin"), Page::Console));
        assert!(matches!(Page::of("/admin/agents/x"), Page::Console));
        assert!(matches!(Page::of("/"), Page::Other));
    }

    #[test]
    fn nonces_are_fresh_and_header_safe() {
        let (a, b) = (Nonce::new(), Nonce::new());
        assert_ne!(a, b);
        assert!(a.len() >= 22, "128 bits of base64");
        assert!(HeaderValue::from_str(&policy(&a, None, false)).is_ok());
    }
}
