//! The lead form: a visitor asks a person to get in touch; what makes it valid.

use serde::{Deserialize, Serialize};

/// `POST /api/v1/conversations/{id}/lead`: the visitor asks a person to get in touch.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeadForm {
    pub name: String,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub phone: Option<String>,
    pub message: String,
}

/// What can be wrong with a lead form (the panel says it in the visitor's language).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeadProblem {
    NameMissing,
    NameTooLong,
    NoContact,
    BadEmail,
    BadPhone,
    MessageTooLong,
}

impl LeadProblem {
    /// The form field it belongs to.
    pub fn field(self) -> &'static str {
        match self {
            LeadProblem::NameMissing | LeadProblem::NameTooLong => "name",
            LeadProblem::NoContact | LeadProblem::BadEmail => "email",
            LeadProblem::BadPhone => "phone",
            LeadProblem::MessageTooLong => "message",
        }
    }

    /// In English (the API's answers).
    pub fn english(self) -> &'static str {
        match self {
            LeadProblem::NameMissing => "Please enter your name.",
            LeadProblem::NameTooLong => "The name is too long (100 characters at most).",
            LeadProblem::NoContact => "Please give an email address or a phone number.",
            LeadProblem::BadEmail => "That email address does not look right.",
            LeadProblem::BadPhone => "That phone number does not look right.",
            LeadProblem::MessageTooLong => "The message is too long (2000 characters at most).",
        }
    }
}

/// Everything wrong with a lead form, empty when it is valid.
pub fn lead_problems(form: &LeadForm) -> Vec<LeadProblem> {
    let mut problems = Vec::new();
    let name = form.name.trim();
    if name.is_empty() {
        problems.push(LeadProblem::NameMissing);
    } else if name.chars().count() > 100 {
        problems.push(LeadProblem::NameTooLong);
    }
    let email = form.email.as_deref().map(str::trim).filter(|e| !e.is_empty());
    let phone = form.phone.as_deref().map(str::trim).filter(|p| !p.is_empty());
    if email.is_none() && phone.is_none() {
        problems.push(LeadProblem::NoContact);
    }
    if let Some(email) = email
        && !looks_like_email(email)
    {
        problems.push(LeadProblem::BadEmail);
    }
    if let Some(phone) = phone
        && !looks_like_phone(phone)
    {
        problems.push(LeadProblem::BadPhone);
    }
    if form.message.chars().count() > 2000 {
        problems.push(LeadProblem::MessageTooLong);
    }
    problems
}

/// Field-level problems with a lead form, in English, empty when it is valid.
pub fn validate_lead(form: &LeadForm) -> Vec<(&'static str, &'static str)> {
    lead_problems(form).into_iter().map(|p| (p.field(), p.english())).collect()
}

pub fn looks_like_email(s: &str) -> bool {
    if s.len() > 254 || s.chars().any(char::is_whitespace) {
        return false;
    }
    match s.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        }
        None => false,
    }
}

pub(crate) fn looks_like_phone(s: &str) -> bool {
    let digits = s.chars().filter(char::is_ascii_digit).count();
    (6..=20).contains(&digits)
        && s.chars().all(|c| c.is_ascii_digit() || matches!(c, '+' | ' ' | '-' | '(' | ')' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(name: &str, email: Option<&str>, phone: Option<&str>) -> LeadForm {
        LeadForm { name: name.into(), email: email.map(Into::into), phone: phone.map(Into::into), message: "hi".into() }
    }

    #[test]
    fn lead_needs_name_and_a_way_to_reach() {
        assert!(validate_lead(&form("Ann", Some("ann@example.com"), None)).is_empty());
        assert!(validate_lead(&form("Ann", None, Some("+852 1234 5678"))).is_empty());
        let fields: Vec<_> = validate_lead(&form(" ", None, None)).into_iter().map(|p| p.0).collect();
        assert_eq!(fields, vec!["name", "email"]);
        assert_eq!(validate_lead(&form("Ann", Some("ann@"), None))[0].0, "email");
        assert_eq!(validate_lead(&form("Ann", None, Some("call me"))).len(), 1);
    }
}
