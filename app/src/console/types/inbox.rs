//! The team inbox as the console shows it (issue 43): the views' counts, colleagues with their
//! presence and load, notes, labels and teams.

use serde::{Deserialize, Serialize};

/// How many conversations waiting for or held by a person each view holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewCounts {
    pub mine: i64,
    pub unassigned: i64,
    pub my_teams: i64,
    pub all: i64,
}

/// A console user as the assign box and the `@` menu list them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Colleague {
    pub id: String,
    pub name: String,
    /// `online`, `away` or `offline`.
    pub presence: String,
    /// Open conversations assigned to them, and the most automatic assignment gives them.
    pub open: i64,
    pub max_open: i64,
}

/// A private note.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoteItem {
    pub id: String,
    pub author: String,
    pub body: String,
    pub created_at: i64,
}

/// A label (its colour is never shown alone: the name always is).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelTag {
    pub id: String,
    pub name: String,
    /// `#rrggbb`.
    pub color: String,
}

/// A team with its members and agents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TeamItem {
    pub id: String,
    pub name: String,
    /// `manual` or `auto`.
    pub mode: String,
    /// `(user id, name)`.
    pub members: Vec<(String, String)>,
    pub agents: Vec<String>,
}

/// A conversation's hand-over summary, written by the copilot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryItem {
    pub text: String,
    /// The model that wrote it.
    pub model: String,
    pub created_at: i64,
    /// What the offline demo model did instead (`None` with a real model).
    pub note: Option<String>,
}

/// A draft from the copilot for the reply box (never sent by itself).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssistItem {
    pub text: String,
    /// The sources a suggestion draws on, `(title, url)`, numbered as in its text from 1.
    pub citations: Vec<(String, Option<String>)>,
    pub cost_usd: f64,
    /// What the offline demo model did instead (`None` with a real model).
    pub note: Option<String>,
}
