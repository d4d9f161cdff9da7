//! The chat panel shown inside the widget's iframe: header, messages with their blocks, the lead
//! form and the composer. Drawn in the browser by the embed page's own bundle (`parley-embed`)
//! from the agent's public configuration, with no framework: the state is in [`model`], each
//! value a [`sig::Sig`] whose watchers redraw their part of the page ([`ui`], [`message`]), and
//! the markup is HTML text (the catalogues' words escaped).

mod actions;
mod apply;
mod attach;
pub mod client;
mod dom;
mod events;
mod follow;
mod form;
mod host;
mod identity;
mod lead_form;
mod message;
pub mod model;
mod rating;
pub mod sig;
mod storage;
#[cfg(test)]
mod tests;
mod ui;
mod unread;

pub use model::Words;
pub use ui::mount;

/// Keeps the newest message in view when the visitor is already near the bottom.
pub fn scroll_to_bottom() {
    dom::next_frame(|| {
        let Some(list) = dom::document().get_element_by_id("pw-list") else { return };
        if list.scroll_height() - list.scroll_top() - list.client_height() < 160 {
            list.set_scroll_top(list.scroll_height());
        }
    });
}

/// The line shown outside business hours: when people are back, in the visitor's own time and
/// language.
fn away_text(labels: &crate::i18n::Labels, locale: &str, back: Option<i64>) -> String {
    let Some(ms) = back else { return labels.away_now.to_owned() };
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    let options = js_sys::Object::new();
    for (k, v) in
        [("weekday", "long"), ("day", "numeric"), ("month", "short"), ("hour", "2-digit"), ("minute", "2-digit")]
    {
        let _ = js_sys::Reflect::set(&options, &k.into(), &v.into());
    }
    let when = date.to_locale_string(locale, &options).as_string().unwrap_or_default();
    format!("{} {when}", labels.away_back)
}
