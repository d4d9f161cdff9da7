//! The wire protocol between the Parley server and the visitor's browser: stream events, rich
//! blocks, and the JSON bodies of the widget API. Serde only: nothing here knows about the server,
//! so the panel, the server and the tests all speak exactly the same types.

mod api;
mod block;
mod codes;
mod event;
mod lead;
mod look;

pub use api::*;
pub use block::*;
pub use codes::*;
pub use event::*;
pub use lead::*;
pub use look::*;
