//! Triggers as the console shows them (`/admin/engage`).

use parley_widget::protocol::Trigger;
use serde::{Deserialize, Serialize};

/// One agent's triggers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngageView {
    pub agent_id: String,
    pub rules: Vec<TriggerItem>,
}

/// A trigger with its figures of the last 30 days.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TriggerItem {
    pub trigger: Trigger,
    pub enabled: bool,
    pub shown: i64,
    pub clicked: i64,
}

/// Whether a trigger would show on an address, and how to see it there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TriggerPreview {
    pub passes: bool,
    /// The conditions, one sentence each.
    pub notes: Vec<String>,
    /// The address with `#parley-preview=NAME`: the loader shows the trigger at once there,
    /// whatever its conditions (enabled triggers only; nothing is counted).
    pub link: Option<String>,
}
