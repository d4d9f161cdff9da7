//! Everything the visitor's browser needs: the wire protocol (serde only), the SSE parser, the
//! markdown sanitiser, the chat panel with its block renderer registry, and the plain-JS loader.

pub mod blocks;
pub mod i18n;
pub mod json;
pub mod markdown;
pub mod panel;
pub mod protocol;
pub mod sse;

/// The plain-JavaScript loader served as `/widget.js`.
pub const LOADER_JS: &str = include_str!("loader/widget.js");
