//! JSON text to and from the widget's types (the text side is `parley_protocol::json`), and
//! values as plain JavaScript objects.
//!
//! In the panel's own bundle (feature `browser-json`, turned on by `parley-embed`) the browser
//! does the text work (`JSON.parse`, `JSON.stringify`) and serde-wasm-bindgen maps the parsed
//! objects onto our types, so the bundle carries no JSON parser and no parser monomorphised per
//! type (serde_json's were a seventh of the panel's code). Everywhere else (the server, the
//! console's bundle, the tests) serde_json does it. Both read the same serde attributes, so they
//! accept and write the same wire format.

#[cfg(feature = "panel")]
use serde::Serialize;

pub use parley_protocol::json::{from_str, to_string};

/// `value` as a plain JavaScript value (objects, not `Map`s; `null` for `None`), as
/// `JSON.parse` would give it.
#[cfg(all(feature = "panel", feature = "browser-json"))]
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Option<wasm_bindgen::JsValue> {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).ok()
}

/// `value` as a plain JavaScript value (objects, not `Map`s; `null` for `None`), as
/// `JSON.parse` would give it.
#[cfg(all(feature = "panel", not(feature = "browser-json")))]
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Option<wasm_bindgen::JsValue> {
    js_sys::JSON::parse(&serde_json::to_string(value).ok()?).ok()
}
