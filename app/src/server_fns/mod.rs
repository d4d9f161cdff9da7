//! Server functions: thin, they check access, call the engine and map the error.

mod agent_config;

pub use agent_config::agent_config;
