//! The widget is light on the wire: the embed page loads the panel's own bundle (never the
//! console's), its content-hashed assets are served precompressed (brotli, gzip) and cached for a
//! year, the page itself is never cached, JSON answers are compressed and event streams never.

use std::path::Path;

use crate::harness::*;
use serde_json::json;

/// A built widget as `.ci/build-widget.sh` leaves it, with recognisable contents.
fn fake_site(dir: &Path) {
    let files = [
        ("boot-0123456789abcdef.js", "import init from './parley_embed-1.js';"),
        ("parley_embed-1.js", "export default function init() {}"),
        ("parley_embed-2.wasm", "\0asm"),
        ("parley-3.css", ".pw-panel{}"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
        std::fs::write(dir.join(format!("{name}.br")), format!("BROTLI:{text}")).unwrap();
        std::fs::write(dir.join(format!("{name}.gz")), format!("GZIP:{text}")).unwrap();
    }
    let manifest = json!({"boot": files[0].0, "js": files[1].0, "wasm": files[2].0, "css": files[3].0});
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
}

#[tokio::test]
async fn the_embed_page_loads_the_panels_own_bundle_served_precompressed_and_cached() {
    let site = tempfile::tempdir().unwrap();
    fake_site(site.path());
    let root = site.path().display().to_string();
    let app = TestApp::builder().config(move |c| c.widget_dir = root).spawn().await;
    app.insert_agent(harness_agent(&app)).await;

    let page = app.client.get(app.url("/embed/shop")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["cache-control"], "no-cache");
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors"));
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"<script type="module" src="/widget/boot-0123456789abcdef.js">"#), "{html}");
    assert!(html.contains(r#"href="/widget/parley-3.css""#) && html.contains("id=\"pw-config\""), "{html}");
    assert!(!html.contains("/pkg/parley"), "no console bundle: {html}");

    for (accept, encoding, prefix) in
        [("br, gzip", Some("br"), "BROTLI:"), ("gzip", Some("gzip"), "GZIP:"), ("", None, "")]
    {
        let r = app
            .client
            .get(app.url("/widget/boot-0123456789abcdef.js"))
            .header("accept-encoding", accept)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["cache-control"], "public, max-age=31536000, immutable");
        assert_eq!(r.headers().get("content-encoding").map(|v| v.to_str().unwrap()), encoding, "{accept}");
        assert!(r.headers()["vary"].to_str().unwrap().to_ascii_lowercase().contains("accept-encoding"));
        assert!(r.headers()["content-type"].to_str().unwrap().contains("javascript"));
        assert!(r.text().await.unwrap().starts_with(&format!("{prefix}import init")), "{accept}");
    }
    let missing = app.client.get(app.url("/widget/nothing-here.js")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn json_is_compressed_and_event_streams_never() {
    let (app, token) = spawn_chat("help", &[]).await;
    let config =
        app.client.get(app.url("/api/v1/agents/help/config")).header("accept-encoding", "gzip").send().await.unwrap();
    assert_eq!(config.status(), 200);
    assert_eq!(config.headers()["content-encoding"], "gzip");
    app.fake.push_content("one two three");
    let stream = app
        .client
        .post(app.url("/api/v1/chat"))
        .bearer_auth(&token)
        .header("accept-encoding", "br, gzip")
        .json(&json!({"agent": "help", "message": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    assert!(stream.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    assert!(stream.headers().get("content-encoding").is_none(), "SSE is never compressed");
    let events = read_events(stream).await;
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete");
}

#[tokio::test]
async fn without_a_built_bundle_the_embed_page_says_the_chat_is_unavailable() {
    let empty = tempfile::tempdir().unwrap();
    let root = empty.path().display().to_string();
    let app = TestApp::builder().config(move |c| c.widget_dir = root).spawn().await;
    app.insert_agent(harness_agent(&app)).await;
    let page = app.client.get(app.url("/embed/shop")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("This chat is not available."));
}

fn harness_agent(app: &TestApp) -> crate::harness::fixtures::AgentFixture {
    crate::harness::fixtures::agent("shop", crate::harness::fixtures::openai_provider(&app.fake))
}
