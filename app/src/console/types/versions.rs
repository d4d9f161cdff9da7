//! Drafts, publishing and history of an agent's behaviour (issue 45, part 3).

use serde::{Deserialize, Serialize};

use super::{AgentForm, ToolInfo};

/// What the versions page needs, in one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VersionsView {
    pub agent_id: String,
    pub agent_name: String,
    /// The version visitors get.
    pub published: i64,
    /// The draft (or, without one, the published behaviour to start one from) in the agent
    /// form's shape: only instructions, model, fallback model, capabilities and tools are used.
    pub form: AgentForm,
    pub draft: Option<DraftInfo>,
    /// Every published version, newest first (one, unrecorded, while nothing was ever changed).
    pub history: Vec<VersionItem>,
    pub tools: Vec<ToolInfo>,
}

/// The draft's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DraftInfo {
    /// The published version it started from.
    pub base_version: i64,
    pub updated_by: Option<String>,
    pub updated_at: i64,
    /// The draft compared with the published version.
    pub diff: BehaviourDiff,
}

/// One published version in the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VersionItem {
    pub version: i64,
    pub published_by: Option<String>,
    pub published_at: i64,
    pub note: String,
    pub changes: String,
    pub restored_from: Option<i64>,
    /// This version compared with the one before it.
    pub diff: BehaviourDiff,
}

/// Two behaviours compared: the parts that differ, and the instructions line by line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BehaviourDiff {
    pub fields: Vec<FieldChange>,
    /// The instructions' lines, empty when they are the same.
    pub prompt: Vec<DiffLine>,
}

/// One setting before and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    pub label: String,
    pub before: String,
    pub after: String,
}

/// One line of the instructions: `same`, `added` or `removed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffLine {
    pub kind: String,
    pub text: String,
}

/// What an action on the versions page came to: a sentence to show, or the form's field errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VersionOutcome {
    /// It was done (else `message` says why not).
    pub ok: bool,
    pub message: String,
    pub errors: Vec<super::FieldError>,
}
