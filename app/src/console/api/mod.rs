//! The console's server functions. Each one takes who is asking first ([`access::ConsoleUser`]
//! or [`access::AdminUser`]: signed in, allowed by role, same site) and answers with a
//! [`ConsoleError`](crate::console::error::ConsoleError); those that change something are POST
//! (every `#[server]` is).

#[cfg(feature = "ssr")]
pub mod access;
pub mod agents;
pub mod answer_tests;
pub mod answers;
pub mod audit;
pub mod auth;
#[cfg(feature = "ssr")]
pub mod checks;
pub mod contacts;
pub mod conversations;
pub mod copilot;
pub mod dashboard;
pub mod engage;
pub mod experts;
pub mod hours;
pub mod http_tools;
pub mod identity;
pub mod inbox;
pub mod knowledge;
pub mod leads;
pub mod models;
pub mod notify;
pub mod orders;
#[cfg(feature = "ssr")]
pub mod paging;
pub mod reports;
pub mod search;
pub mod sources;
pub mod tokens;
pub mod versions;
pub mod webhooks;
