//! Everything the visitor's browser needs: the markdown sanitiser, the chat panel with its block
//! renderer registry, and the plain-JS loader, over the wire protocol of `parley-protocol`
//! (`widget/protocol/`, re-exported here as [`protocol`] with its SSE parser as [`sse`]).

pub mod blocks;
pub mod i18n;
pub mod json;
pub mod markdown;
pub mod panel;

pub use parley_protocol as protocol;
pub use parley_protocol::sse;

/// The plain-JavaScript loader served as `/widget.js`.
pub const LOADER_JS: &str = include_str!("loader/widget.js");
