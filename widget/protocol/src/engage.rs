//! Triggers (issue 44, part 1): the owner's rules for starting a conversation — when (the page,
//! time on it, scrolling, leaving, the visitor, the host's context, business hours, language)
//! and what (a teaser bubble beside the launcher, or the panel opened with a greeting). They
//! travel in the agent's public configuration and the loader evaluates them: a page whose agent
//! has none fetches nothing more. The server checks them on save (`parley_engine::engine::engage`).

use serde::{Deserialize, Serialize};

/// Most triggers an agent may have.
pub const MAX_TRIGGERS: usize = 20;
/// Most buttons on a teaser.
pub const MAX_TEASER_BUTTONS: usize = 3;
/// Longest teaser message, in characters.
pub const MAX_TEASER_CHARS: usize = 240;
/// Longest button text, in characters.
pub const MAX_TEASER_BUTTON_CHARS: usize = 40;

/// One rule: when every condition of `when` holds, `show` is shown, at most once per page view
/// and once per visitor every `every_days` days, and never again in a browser session in which
/// the visitor closed a teaser.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trigger {
    /// Unique per agent: lower-case letters, digits, `-` and `_` (what `Parley.trigger` names).
    pub name: String,
    #[serde(default)]
    pub when: TriggerWhen,
    pub show: TriggerShow,
    /// Once per visitor every this many days (1 to 365).
    #[serde(default = "one_day")]
    pub every_days: u16,
}

fn one_day() -> u16 {
    1
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// The conditions; all that are set must hold. The waits (`seconds`, `scroll`, `exit_intent`)
/// are skipped by `Parley.trigger(name)`; `manual` rules fire only by it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerWhen {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<UrlRule>,
    /// Seconds on the page.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seconds: u32,
    /// How far down the page the visitor has seen, in percent (1 to 100).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scroll: u8,
    /// The pointer leaves the page towards the browser's tabs (desktop only).
    #[serde(default, skip_serializing_if = "is_false")]
    pub exit_intent: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visitor: Option<VisitorKind>,
    /// Top-level values of the host's `Parley.setContext` object, compared as text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextRule>,
    /// The agent's business hours: open (or no hours at all) or closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hours: Option<HoursRule>,
    /// The visitor's browser language, as the panel's tags (`en`, `zh-Hans`, `pt-BR`…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    /// Only when the host page calls `Parley.trigger(name)`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub manual: bool,
}

/// The page's address. A value starting with `/` is compared with the page's path, any other
/// with the whole address (without `#…`); the query string counts only when the value has one.
/// `matches` is a regular expression tried on the whole address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlRule {
    pub kind: UrlMatch,
    pub value: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UrlMatch {
    Is,
    StartsWith,
    Matches,
}

impl UrlMatch {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            UrlMatch::Is => "is",
            UrlMatch::StartsWith => "starts_with",
            UrlMatch::Matches => "matches",
        }
    }

    /// As a sentence says it ("the page starts with /pricing").
    pub fn words(self) -> &'static str {
        match self {
            UrlMatch::Is => "is",
            UrlMatch::StartsWith => "starts with",
            UrlMatch::Matches => "matches",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VisitorKind {
    /// The first browser session this visitor has spent on the site.
    New,
    /// A later one.
    Returning,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoursRule {
    Open,
    Closed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextRule {
    pub key: String,
    pub value: String,
}

/// What a trigger shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TriggerShow {
    /// A bubble beside the closed launcher: the message (opens the panel) and up to three
    /// buttons (each opens the panel and sends its text as the visitor's message).
    Teaser {
        message: String,
        #[serde(default)]
        buttons: Vec<String>,
    },
    /// The panel opens, its greeting replaced by this one (when no conversation is under way).
    Open { greeting: String },
}

/// What the loader reports of a trigger (`POST /api/v1/agents/{key}/engage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngageEvent {
    Shown,
    Clicked,
}

/// The body of `POST /api/v1/agents/{key}/engage`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngageReport {
    pub trigger: String,
    pub event: EngageEvent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_teaser_travels_as_the_loader_reads_it() {
        let t = Trigger {
            name: "pricing".into(),
            when: TriggerWhen {
                url: Some(UrlRule { kind: UrlMatch::StartsWith, value: "/pricing".into() }),
                seconds: 5,
                ..TriggerWhen::default()
            },
            show: TriggerShow::Teaser { message: "Questions?".into(), buttons: vec!["Yes".into()] },
            every_days: 3,
        };
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "name": "pricing",
                "when": {"url": {"kind": "starts_with", "value": "/pricing"}, "seconds": 5},
                "show": {"kind": "teaser", "message": "Questions?", "buttons": ["Yes"]},
                "every_days": 3
            })
        );
        let back: Trigger = serde_json::from_value(json).unwrap();
        assert_eq!(back, t);
        let bare: Trigger = serde_json::from_str(r#"{"name":"x","show":{"kind":"open","greeting":"Hi"}}"#).unwrap();
        assert_eq!(bare.every_days, 1);
        assert_eq!(bare.when, TriggerWhen::default());
    }
}
