//! The wire protocol between the Parley server and the visitor's browser: stream events, rich
//! blocks, and the JSON bodies of the widget API, with the event-stream framing ([`sse`]), JSON
//! text in and out ([`json`]) and the HTML escaper ([`html`]) both sides use. Serde only: nothing
//! here knows about the server or the panel, so the server, the console, the panel and the tests
//! all speak exactly the same types, and the server compiles none of the panel's code for them
//! (the panel's crate, `parley-widget`, re-exports this one as `parley_widget::protocol`).

pub mod html;
pub mod json;
pub mod report;
pub mod sse;

mod api;
mod block;
mod codes;
mod engage;
mod event;
mod form;
mod lead;
mod look;

pub use api::*;
pub use block::*;
pub use codes::*;
pub use engage::*;
pub use event::*;
pub use form::*;
pub use lead::*;
pub use look::*;
