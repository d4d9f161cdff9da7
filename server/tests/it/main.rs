//! Parley's integration tests, in one binary: the real server on port 0 with its own database
//! (SQLite, or PostgreSQL when `PARLEY_TEST_POSTGRES` is set), fake upstreams over real HTTP, and
//! one module per concern. The shared harness is [`harness`].

mod harness;

mod abuse;
mod answer_tests;
mod answers;
mod anthropic;
mod api_access;
mod api_input;
mod api_retries;
mod api_streams;
mod api_transcripts;
mod attachments;
mod bench;
mod console_access;
mod console_agents;
mod console_settings;
mod console_takeover;
mod consulting;
mod contacts;
mod context;
mod copilot;
mod credentials;
mod csp;
mod durability;
mod engage;
mod experts;
mod forms;
mod guards;
mod hours;
mod http_tools;
mod identity;
mod inbox;
mod injection;
mod knowledge_scope;
mod mail;
mod mcp;
mod nginx;
mod notify;
mod payments;
mod privacy;
mod private_endpoints;
mod quick_replies;
mod replicas;
mod return_mail;
mod search;
mod search_bench;
mod signin;
mod sources;
mod spend;
mod store_batches;
mod turns;
mod versions;
mod webhooks;
mod widget_assets;
