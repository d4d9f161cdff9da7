//! The shared test harness: [`TestApp`] (the real server on port 0, its own database, fake
//! upstreams over real HTTP), reading its answers, [`fixtures`] for providers, agents and console
//! users, tools made for the tests, and a [`Browser`] of the console.

mod app;
mod browser;
pub mod fixtures;
mod logs;
mod pay;
mod process;
mod push;
mod read;
mod receiver;
mod sidecar;
mod smtp;
mod tools;

pub use app::*;
pub use browser::Browser;
pub use logs::captured_logs;
pub use pay::*;
pub use process::*;
pub use push::*;
pub use read::*;
pub use receiver::*;
pub use sidecar::free_port;
pub use smtp::*;
pub use tools::*;
