//! Business hours and presence as the console shows them.

use serde::{Deserialize, Serialize};

/// `/admin/hours` for one agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HoursView {
    pub agent_id: String,
    /// The agent has hours (otherwise people are always reachable).
    pub set: bool,
    pub time_zone: String,
    /// Seven lines, Monday first: `09:00-12:00, 13:00-17:00`, empty when closed.
    pub days: Vec<String>,
    /// One date per line.
    pub closed_dates: String,
    /// "Open now", or when people are back.
    pub now: String,
}

/// Who is online, and whether the asking user is away.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PresenceView {
    pub away: bool,
    /// `(name, role)` of each console user online now.
    pub online: Vec<(String, String)>,
}

/// What the signed-in person is mailed about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotificationsView {
    /// The server has SMTP settings.
    pub mail_enabled: bool,
    pub email: String,
    pub events: Vec<String>,
}

/// What a console user can be mailed about, with its label.
pub const NOTIFICATION_CHOICES: [(&str, &str); 4] = [
    ("waiting_human", "A visitor waits for a person"),
    ("lead", "A new lead"),
    ("order_paid", "An order is paid"),
    ("daily_summary", "The daily summary"),
];
