//! `GET /embed/{key}`: the chat panel inside the widget's iframe, and `/widget/…`, its assets.
//!
//! The page is plain HTML: the agent's public configuration as JSON, the host page's origin, and
//! the panel's own browser bundle (crate `parley-embed`, built by `.ci/build-widget.sh` into
//! `target/widget/`, `PARLEY_WIDGET_DIR`, with content-hashed names and brotli/gzip copies). The console's bundle is
//! never loaded here. Hashed assets are served precompressed and cached for a year; the page
//! itself is small and never cached, so a new build reaches visitors at once. The allowed-origin
//! check and the page's policy (`frame-ancestors`) come from [`super::csp::page_policy`], which runs
//! first.

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use parley_app::server::state::AppState;
use parley_protocol::html::escape_html;
use serde::Deserialize;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::extract::ClientIp;

/// The bundle's files, as `.ci/build-widget.sh` names them in `manifest.json`.
#[derive(Clone, Debug, Deserialize)]
pub struct WidgetAssets {
    /// The module that starts the panel (imports `js`, loads `wasm`).
    pub boot: String,
    pub js: String,
    pub wasm: String,
    pub css: String,
}

impl WidgetAssets {
    /// Reads `<dir>/manifest.json`; `None` (and a warning) when the bundle was not built.
    pub fn load(dir: &Path) -> Option<WidgetAssets> {
        let path = dir.join("manifest.json");
        match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<WidgetAssets>(&t).map_err(|e| e.to_string()))
        {
            Ok(assets) => Some(assets),
            Err(e) => {
                tracing::warn!(
                    path = %path.display(),
                    error = %e,
                    "the widget's bundle is not built (run .ci/build-widget.sh): embed pages will say the chat is unavailable"
                );
                None
            }
        }
    }
}

pub fn router(state: &AppState) -> Router<AppState> {
    let dir = state.http.widget_dir.clone();
    let assets = Arc::new(WidgetAssets::load(&dir));
    let files = ServeDir::new(&dir).precompressed_br().precompressed_gzip();
    Router::new()
        .route(
            "/embed/{key}",
            get(move |state, ip, key, query, headers| page(state, ip, key, query, headers, assets.clone())),
        )
        .nest_service(
            "/widget",
            tower::ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::overriding(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("public, max-age=31536000, immutable"),
                ))
                // Whichever copy was sent (brotli, gzip or plain), caches must key it by encoding.
                .layer(SetResponseHeaderLayer::overriding(header::VARY, HeaderValue::from_static("accept-encoding")))
                .service(files),
        )
}

#[derive(Deserialize)]
struct EmbedQuery {
    origin: Option<String>,
}

async fn page(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    UrlPath(key): UrlPath<String>,
    Query(query): Query<EmbedQuery>,
    headers: HeaderMap,
    assets: Arc<Option<WidgetAssets>>,
) -> Response {
    if let Err(refused) = state.limits.check(parley_engine::limits::Action::Read, ip, None) {
        return crate::api_error::ApiFailure::limited(refused).into_response();
    }
    let agent = match state.engine.agent_by_key(&key).await {
        Ok(Some(agent)) => agent,
        Ok(None) => return (StatusCode::NOT_FOUND, "Unknown agent.").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "could not load the agent of an embed page");
            return (StatusCode::SERVICE_UNAVAILABLE, "Something went wrong.").into_response();
        }
    };
    let config = parley_engine::public_config_now(&state.engine, &agent).await;
    let host_origin = query.origin.map(|o| o.trim_end_matches('/').to_owned()).unwrap_or_default();
    let browser = accept_language(headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()));
    let lang = parley_widget::i18n::choose(config.language, &browser);
    let html = render(&config, &host_origin, lang, (*assets).as_ref());
    // The page's words follow the browser's languages when the agent says `auto`.
    ([(header::CACHE_CONTROL, "no-cache"), (header::VARY, "accept-language")], Html(html)).into_response()
}

/// The tags of an `Accept-Language` header, most wanted first (by `q`, then by order); `q=0`
/// and `*` dropped. A browser sends `navigator.languages` here, so the page and the loader
/// (which reads `navigator.languages` itself) choose the same language.
fn accept_language(header: Option<&str>) -> Vec<String> {
    let mut tags: Vec<(f32, String)> = header
        .unwrap_or("")
        .split(',')
        .filter_map(|part| {
            let mut bits = part.split(';');
            let tag = bits.next()?.trim();
            let q = bits
                .find_map(|b| b.trim().strip_prefix("q=").map(|q| q.trim().parse::<f32>().unwrap_or(0.0)))
                .unwrap_or(1.0);
            (!tag.is_empty() && tag != "*" && q > 0.0).then(|| (q, tag.to_owned()))
        })
        .collect();
    // A stable sort keeps the header's order among equal weights.
    tags.sort_by(|a, b| b.0.total_cmp(&a.0));
    tags.into_iter().map(|(_, t)| t).collect()
}

/// The catalogue of a language other than English (which the bundle carries) as a JSON data
/// block: a visitor downloads only their own language's words.
fn labels_json(lang: parley_widget::i18n::Lang) -> Option<String> {
    if lang == parley_widget::i18n::Lang::En {
        return None;
    }
    let map: serde_json::Map<String, serde_json::Value> =
        lang.labels().entries().into_iter().map(|(k, v)| (k.to_owned(), v.into())).collect();
    Some(serde_json::Value::Object(map).to_string().replace('<', "\\u003c"))
}

/// The page: the configuration as a JSON data block (never run as script), the bundle's module
/// and stylesheet, preloads so the wasm downloads beside the JavaScript, and a placeholder.
fn render(
    config: &parley_protocol::PublicAgentConfig,
    host_origin: &str,
    lang: parley_widget::i18n::Lang,
    assets: Option<&WidgetAssets>,
) -> String {
    // `<` written as `\u003c` so the text cannot close its `<script>` element.
    let json = serde_json::to_string(config).unwrap_or_else(|_| "null".into()).replace('<', "\\u003c");
    let head = match assets {
        Some(a) => format!(
            "<link rel=\"stylesheet\" href=\"/widget/{css}\">\
             <link rel=\"modulepreload\" href=\"/widget/{js}\">\
             <link rel=\"preload\" href=\"/widget/{wasm}\" as=\"fetch\" type=\"application/wasm\" crossorigin>\
             <script type=\"module\" src=\"/widget/{boot}\"></script>",
            css = escape_html(&a.css),
            js = escape_html(&a.js),
            wasm = escape_html(&a.wasm),
            boot = escape_html(&a.boot),
        ),
        None => String::new(),
    };
    let body = if assets.is_some() {
        "<div class=\"pw-loading\" aria-busy=\"true\"></div>"
    } else {
        "<p class=\"pw-unavailable\">This chat is not available.</p>"
    };
    let labels = labels_json(lang)
        .map(|j| format!("<script type=\"application/json\" id=\"pw-labels\">{j}</script>"))
        .unwrap_or_default();
    format!(
        "<!DOCTYPE html><html lang=\"{tag}\" dir=\"{dir}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><link rel=\"icon\" href=\"data:,\">{head}\
         <script type=\"application/json\" id=\"pw-config\">{json}</script>{labels}</head>\
         <body data-host-origin=\"{origin}\">{body}</body></html>",
        tag = lang.tag(),
        dir = lang.dir(),
        title = escape_html(&config.name),
        origin = escape_html(host_origin),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_widget::i18n::Lang;

    #[test]
    fn the_page_carries_the_config_as_inert_json_and_escapes_what_it_shows() {
        let config: parley_protocol::PublicAgentConfig = serde_json::from_value(serde_json::json!({
            "key": "k", "name": "A <b>\"bold\"</b> agent", "greeting": "</script><script>alert(1)</script>",
            "theme": {"color": "#123456", "position": "right"}, "capabilities": [], "demo_model": false,
            "max_message_chars": 4000
        }))
        .expect("a config");
        let assets = WidgetAssets {
            boot: "boot-1.js".into(),
            js: "p-2.js".into(),
            wasm: "p-3.wasm".into(),
            css: "p-4.css".into(),
        };
        let html = render(&config, "https://shop.example\"><x", Lang::En, Some(&assets));
        assert!(!html.contains("</script><script>alert"), "{html}");
        assert!(html.contains("\\u003c/script>\\u003cscript>alert(1)"), "{html}");
        assert!(html.contains("<title>A &lt;b&gt;&quot;bold&quot;&lt;/b&gt; agent</title>"), "{html}");
        assert!(html.contains("data-host-origin=\"https://shop.example&quot;&gt;&lt;x\""), "{html}");
        assert!(html.contains("<script type=\"module\" src=\"/widget/boot-1.js\">"), "{html}");
        let json = html.split("id=\"pw-config\">").nth(1).unwrap().split("</script>").next().unwrap();
        let back: parley_protocol::PublicAgentConfig = serde_json::from_str(json).unwrap();
        assert_eq!(back.greeting, config.greeting);
        assert!(render(&config, "", Lang::En, None).contains("not available"));
        assert!(!html.contains("pw-labels"), "English is in the bundle");
        // Another language's words come with the page, and only that language's.
        let ar = render(&config, "", Lang::Ar, Some(&assets));
        assert!(ar.starts_with("<!DOCTYPE html><html lang=\"ar\" dir=\"rtl\">"), "{ar}");
        let json = ar.split("id=\"pw-labels\">").nth(1).unwrap().split("</script>").next().unwrap();
        let map: std::collections::BTreeMap<String, String> = serde_json::from_str(json).unwrap();
        assert_eq!(parley_widget::i18n::Labels::from_map(&map).unwrap(), *Lang::Ar.labels());
    }

    #[test]
    fn accept_language_is_read_by_weight_then_order() {
        assert_eq!(accept_language(Some("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5")), ["fr-CH", "fr", "en", "de"]);
        assert_eq!(accept_language(Some("en;q=0.5, ar")), ["ar", "en"]);
        assert_eq!(accept_language(Some("ja;q=0, ko")), ["ko"]);
        assert!(accept_language(None).is_empty());
        assert!(accept_language(Some(" , ;q=1")).is_empty());
    }
}
