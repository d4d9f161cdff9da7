//! Known visitors as the console shows them: an agent's identity settings and secrets, and the
//! host site's users it has met.

use serde::{Deserialize, Serialize};

/// How long a replaced identity secret is still accepted unless the administrator says
/// otherwise, in hours.
pub const DEFAULT_GRACE_HOURS: i64 = parley_widget::protocol::IDENTITY_GRACE_HOURS;

/// An identified visitor, as a list or a transcript names them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserLabel {
    /// The host site's user id (`sub`).
    pub id: String,
    pub name: Option<String>,
    pub email: Option<String>,
}

impl UserLabel {
    /// "Ada Lovelace <ada@example.com>", or whatever of it is known, else the user id.
    pub fn display(&self) -> String {
        match (&self.name, &self.email) {
            (Some(n), Some(e)) => format!("{n} <{e}>"),
            (Some(n), None) => n.clone(),
            (None, Some(e)) => e.clone(),
            (None, None) => format!("user {}", self.id),
        }
    }
}

/// An identity secret in the list (never the secret).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SecretItem {
    pub id: String,
    pub prefix: String,
    pub created_at: i64,
    /// `None`: the current secret.
    pub expires_at: Option<i64>,
    /// Still accepted now.
    pub accepted: bool,
}

/// A user of the host site the agent has met.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserItem {
    pub user: UserLabel,
    pub conversations: i64,
    pub created_at: i64,
    pub last_seen_at: i64,
}

/// `/admin/identity` for one agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdentityView {
    pub agent_id: String,
    pub agent_key: String,
    pub required: bool,
    /// The longest token lifetime accepted, in minutes.
    pub max_age_minutes: i64,
    /// Days conversations are kept; `None`: for ever.
    pub retention_days: Option<i64>,
    pub secrets: Vec<SecretItem>,
    pub users: Vec<UserItem>,
}

/// A secret just made: shown once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewIdentitySecret {
    pub secret: String,
    pub agent_key: String,
    /// Hours the replaced secret stays accepted (0 when there was none).
    pub grace_hours: i64,
}

/// One entry of the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditItem {
    pub at: i64,
    /// An email, `cli`, or the address a refused sign-in gave.
    pub actor: String,
    pub action: String,
    pub target: Option<String>,
    pub detail: String,
}
