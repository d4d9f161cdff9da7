//! The demo host page: a pretend customer website on another origin (another port) that embeds
//! the widget with the one-line snippet, so cross-origin embedding is what a visitor exercises.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::State;
use axum::response::Html;
use axum::routing::get;
use parley_protocol::html::escape_html;

#[derive(Clone)]
struct Page {
    app_url: String,
}

/// Serves the demo pages on `addr`; returns the bound address.
pub async fn spawn(addr: SocketAddr, app_url: String) -> std::io::Result<SocketAddr> {
    let app = Router::new().route("/", get(help)).route("/immigration", get(immigration)).with_state(Page { app_url });
    let listener = crate::bind(addr)?;
    let bound = listener.local_addr()?;
    crate::serve_in_background(listener, app, "demo host page");
    Ok(bound)
}

async fn help(State(page): State<Page>) -> Html<String> {
    Html(render(
        &page.app_url,
        "demo-help",
        "Acme Outdoor — help center demo",
        "Ask about an order, or ask for a person.",
    ))
}

async fn immigration(State(page): State<Page>) -> Html<String> {
    Html(render(&page.app_url, "demo-immigration", "港移民咨询 — 演示网站", "试试：优才计划的条件是什么？"))
}

fn render(app_url: &str, agent: &str, title: &str, hint: &str) -> String {
    let app_url = escape_html(app_url.trim_end_matches('/'));
    let title = escape_html(title);
    let hint = escape_html(hint);
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title}</title>
<style>
  /* A host site with loud styles of its own: none of them may reach the chat panel. */
  body {{ font-family: Georgia, serif; margin: 0; background: #fdf6e3; color: #3b3b3b; }}
  header {{ background: #2f4f2f; color: #fff; padding: 1.2rem 2rem; }}
  main {{ max-width: 46rem; padding: 1rem 2rem 8rem; }}
  button {{ font: inherit; background: #b22222; color: #fff; border: 0; padding: .5rem .9rem; border-radius: 3px; }}
  * {{ letter-spacing: .02em; }}
  code {{ background: #eee; padding: 0 .3em; }}
</style>
</head>
<body>
<header><h1>{title}</h1></header>
<main>
  <p>This page is a pretend customer website, served from a different origin than Parley
     (<code>{app_url}</code>). It embeds the chat widget with one line:</p>
  <pre><code>&lt;script src="{app_url}/widget.js" data-agent="{agent}" async&gt;&lt;/script&gt;</code></pre>
  <p>{hint}</p>
  <p>
    <button type="button" onclick="Parley.open()">Parley.open()</button>
    <button type="button" onclick="Parley.close()">Parley.close()</button>
    <button type="button" onclick="Parley.reset()">Parley.reset()</button>
  </p>
  <p><a href="/">Help-center demo</a> · <a href="/immigration">Immigration demo</a></p>
</main>
<script src="{app_url}/widget.js" data-agent="{agent}" async></script>
</body>
</html>
"#
    )
}
