//! The console's server functions. Each one checks the session first ([`access::require`]);
//! those that change something are POST (every `#[server]` is) and refuse cross-site requests.

#[cfg(feature = "ssr")]
pub mod access;
pub mod agents;
pub mod auth;
pub mod conversations;
pub mod dashboard;
pub mod experts;
pub mod knowledge;
pub mod leads;
pub mod models;
pub mod orders;
pub mod tokens;
