//! The Content-Security-Policy of Parley's HTML pages: every page names a fresh nonce, every
//! `<script>` Leptos writes carries it, the embed page runs no inline script, and
//! `frame-ancestors` is what each page allows.

use crate::harness::fixtures::{self, ADMIN};
use crate::harness::*;

/// The page's policy and body; fails unless it is a `200` HTML page.
async fn page(response: reqwest::Response) -> (String, String) {
    assert_eq!(response.status(), 200, "{}", response.url());
    let csp = response
        .headers()
        .get("content-security-policy")
        .unwrap_or_else(|| panic!("{} sends a policy", response.url()))
        .to_str()
        .unwrap()
        .to_owned();
    (csp, response.text().await.unwrap())
}

/// The nonce named by `script-src`.
fn nonce(csp: &str) -> String {
    let script_src = csp.split(';').map(str::trim).find(|d| d.starts_with("script-src ")).expect("script-src");
    assert!(!script_src.contains("'unsafe-inline'") && !script_src.contains("'unsafe-eval'"), "{csp}");
    let nonce = script_src
        .split(' ')
        .find_map(|s| s.strip_prefix("'nonce-").and_then(|s| s.strip_suffix('\'')))
        .unwrap_or_else(|| panic!("a nonce in {csp}"));
    assert!(nonce.len() >= 22, "at least 128 bits: {nonce}");
    nonce.to_owned()
}

/// The `frame-ancestors` sources, if the policy has the directive.
fn frame_ancestors(csp: &str) -> Option<String> {
    csp.split(';').map(str::trim).find_map(|d| d.strip_prefix("frame-ancestors ")).map(str::to_owned)
}

/// Checks the page's policy and that each of its scripts (a Leptos page's: the hydration script,
/// streamed chunks) carries the nonce; returns the nonce.
fn assert_strict(csp: &str, html: &str) -> String {
    let nonce = assert_policy(csp);
    let scripts = scripts(html);
    assert!(!scripts.is_empty(), "the hydration script is there");
    for attributes in scripts {
        assert!(attributes.contains(&format!("nonce=\"{nonce}\"")), "<script{attributes}> lacks the nonce {nonce}");
    }
    nonce
}

/// The attributes of each `<script>` of the page.
fn scripts(html: &str) -> Vec<&str> {
    html.split("<script").skip(1).map(|s| &s[..s.find('>').unwrap()]).collect()
}

/// Checks the page's policy; returns its nonce.
fn assert_policy(csp: &str) -> String {
    let nonce = nonce(csp);
    for directive in [
        "default-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        // (https: for a choice card's image, an owner tool's own address.)
        "img-src 'self' data: blob: https:",
        "connect-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ] {
        assert!(csp.split("; ").any(|d| d == directive), "{directive} in {csp}");
    }
    nonce
}

/// The embed page (plain HTML, the panel's own bundle) runs no inline script: its module comes
/// from Parley and its configuration is a JSON data block, which is never run.
fn assert_no_inline_script(html: &str) {
    for attributes in scripts(html) {
        let external = attributes.contains(" src=\"/");
        let data = attributes.contains("type=\"application/json\"");
        assert!(external || data, "<script{attributes}> would run inline");
    }
}

#[tokio::test]
async fn the_home_embed_and_console_pages_send_a_strict_policy_with_a_fresh_nonce() {
    let app = spawn_app().await;
    app.insert_agent(fixtures::agent("shop", fixtures::openai_provider(&app.fake)).origins(&["https://shop.example"]))
        .await;
    app.agent("fresh", &[]).await;

    let (csp, html) = page(app.client.get(app.url("/")).send().await.unwrap()).await;
    let home = assert_strict(&csp, &html);
    assert_eq!(frame_ancestors(&csp), None, "the home page says nothing about framing, as before");

    let (csp, html) =
        page(app.client.get(app.url("/embed/shop?origin=https%3A%2F%2Fshop.example")).send().await.unwrap()).await;
    let embed = assert_policy(&csp);
    assert_no_inline_script(&html);
    assert_eq!(frame_ancestors(&csp).as_deref(), Some("'self' https://shop.example"), "{csp}");
    let (csp, _) = page(app.client.get(app.url("/embed/fresh")).send().await.unwrap()).await;
    assert_eq!(frame_ancestors(&csp).as_deref(), Some("'self'"), "no listed origin: Parley's own pages only");

    let login = app.client.get(app.url("/admin/login")).send().await.unwrap();
    assert_eq!(login.headers()["x-frame-options"], "DENY");
    let (csp, html) = page(login).await;
    let console = assert_strict(&csp, &html);
    assert_eq!(frame_ancestors(&csp).as_deref(), Some("'none'"));

    // A signed-in console page (its data streamed in by Leptos) carries the same rules.
    app.add_user(&ADMIN).await;
    let browser = app.signed_in(&ADMIN).await;
    let (csp, html) = page(browser.get("/admin/agents").await).await;
    let agents = assert_strict(&csp, &html);
    assert_eq!(frame_ancestors(&csp).as_deref(), Some("'none'"));

    // The 404 page is a Leptos page too.
    let missing = app.client.get(app.url("/no-such-page")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let csp = missing.headers()["content-security-policy"].to_str().unwrap().to_owned();
    let not_found = assert_strict(&csp, &missing.text().await.unwrap());

    // Every response its own nonce.
    let (again, _) = page(app.client.get(app.url("/admin/login")).send().await.unwrap()).await;
    let all = [home, embed, console, agents, not_found, nonce(&again)];
    let distinct: std::collections::HashSet<_> = all.iter().collect();
    assert_eq!(distinct.len(), all.len(), "{all:?}");
}

#[tokio::test]
async fn a_response_with_a_policy_of_its_own_keeps_it() {
    let (app, token) = spawn_chat("bot", &["voice_calls"]).await;
    app.add_user(&ADMIN).await;
    let browser = app.signed_in(&ADMIN).await;
    let id = app.upload_ok(&token, "image/png", crate::attachments::PNG).await;
    let image = browser.get(&format!("/admin/attachments/{id}")).await;
    assert_eq!(image.status(), 200);
    assert_eq!(image.headers()["content-security-policy"], "default-src 'none'; sandbox");
}
