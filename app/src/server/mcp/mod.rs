//! MCP (the Model Context Protocol) as the app serves it: the engine's side (tokens, the
//! built-in MCP tools, output formats: `parley_engine::mcp`, re-exported here) and the protocol's
//! side on rmcp — [`catalogue`] (what a token lists) and [`service`] (the handler, the Streamable
//! HTTP service and the stdio server).

pub mod catalogue;
pub mod service;

pub use parley_engine::mcp::*;
