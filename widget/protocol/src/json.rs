//! JSON text to and from the wire types.
//!
//! In the panel's own bundle (feature `browser-json`, turned on by `parley-embed` through
//! `parley-widget`) the browser does the text work (`JSON.parse`, `JSON.stringify`) and
//! serde-wasm-bindgen maps the parsed objects onto our types, so the bundle carries no JSON
//! parser and no parser monomorphised per type (serde_json's were a seventh of the panel's code).
//! Everywhere else (the server, the console's bundle, the tests) serde_json does it. Both read the
//! same serde attributes, so they accept and write the same wire format.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Reads `T` from JSON text; the error says why it could not.
#[cfg(feature = "browser-json")]
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let value = js_sys::JSON::parse(text).map_err(|_| "not JSON".to_owned())?;
    serde_wasm_bindgen::from_value(value).map_err(|e| e.to_string())
}

/// Reads `T` from JSON text; the error says why it could not.
#[cfg(not(feature = "browser-json"))]
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// `value` as JSON text.
#[cfg(feature = "browser-json")]
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .ok()
        .and_then(|v| js_sys::JSON::stringify(&v).ok())
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}

/// `value` as JSON text.
#[cfg(not(feature = "browser-json"))]
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
