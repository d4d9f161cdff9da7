//! The browser bundle of the embed page `/embed/{key}` (the widget's iframe): the chat panel and
//! nothing else, rendered in the browser. The server puts the agent's public configuration in
//! the page as JSON (`<script type="application/json" id="pw-config">`) and the host page's
//! origin in `data-host-origin` on `<body>`; this reads both and mounts the panel.
//!
//! The admin console and the pages stay in the app's bundle (`/pkg/parley.wasm`); a visitor
//! downloads only this one, a fraction of the size. Built by `.ci/build-widget.sh`.

#[cfg(target_arch = "wasm32")]
mod browser {
    use parley_widget::protocol::PublicAgentConfig;
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(start)]
    pub fn start() {
        let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
        let Some(body) = document.body() else { return };
        let config = document
            .get_element_by_id("pw-config")
            .and_then(|e| e.text_content())
            .and_then(|json| parley_widget::json::from_str::<PublicAgentConfig>(&json).ok());
        let host_origin = body.get_attribute("data-host-origin").filter(|o| !o.is_empty());
        let words = parley_widget::panel::Words::from_page(&document);
        // The server's "loading" placeholder goes; the panel takes the page.
        body.set_inner_html("");
        match config {
            Some(config) => parley_widget::panel::mount(&body, &config, host_origin, words),
            None => body.set_inner_html("<p class=\"pw-unavailable\">This chat is not available.</p>"),
        }
    }
}
