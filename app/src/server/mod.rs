//! The console's server side that needs the web framework: the state every request shares (it
//! holds Leptos's options) and the MCP service (rmcp). Everything else on the server is the
//! engine crate (`parley-engine`, app/engine/).

pub mod mcp;
pub mod state;
