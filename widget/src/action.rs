//! What a button or form of the panel does: its `data-pw` attribute. One table gives each
//! [`Action`] its attribute value; the templates write the attribute from the enum and the
//! panel's event handlers `match` on [`Action::parse`] of it, so an action that is written is
//! one that is handled (the `match` is exhaustive) and the two cannot drift apart.

use std::fmt;

use crate::html::ToHtml;

/// The enum, its table of attribute values, and `as_str`/`parse` from one list.
macro_rules! actions {
    ($($(#[$doc:meta])* $name:ident = $value:literal,)*) => {
        /// What a button or form does (`data-pw`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Action {
            $($(#[$doc])* $name,)*
        }

        impl Action {
            /// Every action, in the table's order.
            pub const ALL: &[Action] = &[$(Action::$name,)*];

            /// The `data-pw` value.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Action::$name => $value,)*
                }
            }
        }
    };
}

actions! {
    /// Starts a new conversation (header).
    Reset = "reset",
    /// Asks the host page to close the panel (header).
    Close = "close",
    /// A starter question (with `data-n`, its index).
    Starter = "starter",
    /// A quick reply under an answer (with `data-text`): sent as the visitor's message.
    Reply = "reply",
    /// Asks a cut-off answer's question again.
    Retry = "retry",
    /// The escalation block's button: opens the lead form.
    Escalate = "escalate",
    /// The composer's button while nothing is being written.
    Send = "send",
    /// The same button while an answer is being written.
    Stop = "stop",
    /// The lead form's cancel button.
    LeadCancel = "lead-cancel",
    /// Thumbs up under an answer.
    Up = "up",
    /// Thumbs down under an answer.
    Down = "down",
    /// One of the conversation's five stars (with `data-n`).
    Star = "star",
    /// "Email me this conversation".
    Email = "email",
    /// The paper clip: opens the file picker.
    Attach = "attach",
    /// Takes a chosen image back (with `data-url`).
    Remove = "remove",
    /// A rating comment's submit button (its form does the work).
    SendRating = "send-rating",
    /// Form: the composer.
    Compose = "compose",
    /// Form: the lead form.
    Lead = "lead",
    /// Form: the code mailed to confirm the visitor's address.
    EmailCode = "email-code",
    /// Form: a form the model asked for (with `data-form`, its id).
    Form = "form",
    /// Form: what was missing after a thumbs down.
    RateComment = "rate-comment",
    /// Form: the stars and comment for a closed conversation.
    RateConversation = "rate-conversation",
}

impl Action {
    /// The action whose `data-pw` value is `value`.
    pub fn parse(value: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.as_str() == value)
    }
}

/// An attribute value of the table: letters and `-` only, nothing to escape.
impl ToHtml for Action {
    fn write_html(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_parses_back_and_needs_no_escaping() {
        for &a in Action::ALL {
            assert_eq!(Action::parse(a.as_str()), Some(a));
            assert!(a.as_str().bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{a:?}");
            assert_eq!(crate::html::html!("{}", a).as_str(), a.as_str());
        }
        let mut values: Vec<_> = Action::ALL.iter().map(|a| a.as_str()).collect();
        values.sort_unstable();
        values.dedup();
        assert_eq!(values.len(), Action::ALL.len(), "two actions with one value");
        assert_eq!(Action::parse("nothing"), None);
        assert_eq!(Action::parse(""), None);
    }
}
