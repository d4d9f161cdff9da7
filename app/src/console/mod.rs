//! The admin console under `/admin`: server-rendered pages that hydrate, talking to the server
//! only through the server functions in [`api`] (each checks the session first, and fails with
//! an [`error::ConsoleError`]) and the live feed at `/admin/feed`. Pages load through
//! [`loaded::Loaded`]; forms are built from [`fields`].

pub mod agent_form;
pub mod agent_look;
pub mod agents;
pub mod answer_tests;
pub mod answers;
pub mod api;
pub mod audit;
pub mod charts;
pub mod contacts;
pub mod conversations;
mod copilot;
pub mod dashboard;
pub mod engage;
mod engage_form;
pub mod error;
pub mod experts;
pub mod fields;
pub mod hours;
pub mod http_tools;
pub mod identity;
pub mod inbox_admin;
pub mod inbox_list;
pub mod inbox_panel;
pub mod knowledge;
pub mod layout;
pub mod lists;
pub mod loaded;
pub mod login;
pub mod look_preview;
pub mod models;
pub mod notifications;
mod notify_live;
mod preview;
pub mod records;
pub mod render_once;
mod reply_box;
pub mod reports;
pub mod search;
mod shortcuts;
pub mod source_page;
pub mod source_run;
pub mod sources;
pub mod tokens;
mod transcript;
pub mod types;
pub mod uploads;
pub mod versions;
pub mod webhooks;
