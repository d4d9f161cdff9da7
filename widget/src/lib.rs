//! Everything the visitor's browser needs: the markdown sanitiser, the block renderer registry,
//! the catalogues, the owner's colours, the plain-JS loader and (feature `panel`) the chat panel,
//! over the wire protocol of `parley-protocol` (`widget/protocol/`, re-exported here as
//! [`protocol`] with its SSE parser as [`sse`]).
//!
//! The console and the server use the parts that are plain Rust (blocks, markdown, catalogues,
//! colours, the loader); only the panel's own bundle (`embed/`) turns on `panel`, so they never
//! compile the panel's DOM code nor the browser APIs it calls.

pub mod action;
pub mod blocks;
pub mod colors;
pub mod html;
pub mod i18n;
pub mod json;
pub mod markdown;
#[cfg(feature = "panel")]
pub mod panel;

pub use parley_protocol as protocol;
pub use parley_protocol::sse;

/// The plain-JavaScript loader served as `/widget.js`.
pub const LOADER_JS: &str = include_str!("loader/widget.js");
