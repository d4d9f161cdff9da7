//! What the Reports page needs besides the report itself (`parley_protocol::report`).

use serde::{Deserialize, Serialize};

/// The choices of the page's filters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportOptions {
    /// (id, name) pairs.
    pub agents: Vec<(String, String)>,
    pub teams: Vec<(String, String)>,
    pub operators: Vec<(String, String)>,
    /// The published versions of each agent: (agent id, version numbers, newest first).
    pub versions: Vec<(String, Vec<i64>)>,
}
