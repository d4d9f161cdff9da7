//! The `form` block (issue 44, part 3): fields the model asks the visitor to fill in, and what
//! makes a definition and a submission valid. One set of rules for the panel (which checks before
//! sending, in the visitor's language) and the server (which checks again against the stored
//! block: a forged submission is refused), so the two cannot disagree.

use serde::{Deserialize, Serialize};

use crate::lead::{looks_like_email, looks_like_phone};

/// At most this many fields in one form.
pub const MAX_FORM_FIELDS: usize = 8;
/// At most this many options in a `select`.
pub const MAX_FORM_OPTIONS: usize = 10;
/// At most this many characters in one answer.
pub const MAX_FORM_VALUE_CHARS: usize = 500;
/// At most this many characters in a label, a title or an option.
pub const MAX_FORM_LABEL_CHARS: usize = 80;

/// What a field takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    Text,
    Email,
    Phone,
    /// One of the field's `options`.
    Select,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
}

impl FieldKind {
    pub const ALL: [FieldKind; 5] =
        [FieldKind::Text, FieldKind::Email, FieldKind::Phone, FieldKind::Select, FieldKind::Date];

    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Text => "text",
            FieldKind::Email => "email",
            FieldKind::Phone => "phone",
            FieldKind::Select => "select",
            FieldKind::Date => "date",
        }
    }
}

/// One field of a form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormField {
    /// The answer's key (`[a-z0-9_]`, at most 32 characters), unique in the form.
    pub name: String,
    /// What the visitor reads.
    pub label: String,
    #[serde(rename = "type")]
    pub kind: FieldKind,
    #[serde(default)]
    pub required: bool,
    /// The choices of a `select` (none for the other kinds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// Fields the visitor fills in under an answer; their answers reach the model as the result of a
/// `form_answers` tool call, never as free text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Form {
    /// Chosen by the server; the submission names it.
    pub form_id: String,
    #[serde(default)]
    pub title: String,
    pub fields: Vec<FormField>,
    /// The button's text (`None`: the panel's own "Send").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_label: Option<String>,
    pub fallback_text: String,
}

/// The form id of an agent's pre-chat form (asked before the first message).
pub const PRECHAT_FORM_ID: &str = "prechat";

/// How a pre-chat form asks for one detail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    #[default]
    Off,
    Optional,
    Required,
}

impl Ask {
    pub fn as_str(self) -> &'static str {
        match self {
            Ask::Off => "off",
            Ask::Optional => "optional",
            Ask::Required => "required",
        }
    }

    pub fn parse(s: &str) -> Option<Ask> {
        [Ask::Off, Ask::Optional, Ask::Required].into_iter().find(|a| a.as_str() == s.trim())
    }
}

/// An agent's pre-chat form: asked before the first message when it asks for anything (its
/// title and the visitor's name, email address and phone number, each off, optional or required).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Prechat {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub name: Ask,
    #[serde(default)]
    pub email: Ask,
    #[serde(default)]
    pub phone: Ask,
}

impl Prechat {
    /// It asks for something (its form is shown).
    pub fn is_on(&self) -> bool {
        [self.name, self.email, self.phone].iter().any(|a| *a != Ask::Off)
    }

    /// The form it shows (`None`: it asks for nothing). The labels are English; the panel shows
    /// its own words for these three fields.
    pub fn form(&self) -> Option<Form> {
        let fields: Vec<FormField> = [
            ("name", "Name", FieldKind::Text, self.name),
            ("email", "Email", FieldKind::Email, self.email),
            ("phone", "Phone", FieldKind::Phone, self.phone),
        ]
        .into_iter()
        .filter(|(.., ask)| *ask != Ask::Off)
        .map(|(name, label, kind, ask)| FormField {
            name: name.into(),
            label: label.into(),
            kind,
            required: ask == Ask::Required,
            options: Vec::new(),
        })
        .collect();
        (!fields.is_empty()).then(|| Form {
            form_id: PRECHAT_FORM_ID.into(),
            title: self.title.trim().to_owned(),
            fallback_text: "Please tell us who you are before we start.".into(),
            fields,
            submit_label: None,
        })
    }
}

/// One answer of a submitted form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FormAnswer {
    pub name: String,
    pub label: String,
    pub value: String,
}

/// A submitted form, on the visitor's message that sent it (`form_answers`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FormAnswers {
    pub form_id: String,
    pub answers: Vec<FormAnswer>,
    pub fallback_text: String,
}

/// What the panel sends with a message that submits a form: the form and the values by field
/// name (an empty value is an unanswered field).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FormSubmission {
    pub form_id: String,
    pub values: Vec<FormValue>,
}

/// A field's value in a submission.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FormValue {
    pub name: String,
    pub value: String,
}

/// What can be wrong with a submitted value (the panel says it in the visitor's language).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormProblem {
    Missing,
    TooLong,
    BadEmail,
    BadPhone,
    NotAnOption,
    BadDate,
    /// A value for a field the form does not have.
    UnknownField,
}

impl FormProblem {
    /// In English (the API's answers).
    pub fn english(self) -> &'static str {
        match self {
            FormProblem::Missing => "is required",
            FormProblem::TooLong => "is longer than 500 characters",
            FormProblem::BadEmail => "is not an email address",
            FormProblem::BadPhone => "is not a phone number",
            FormProblem::NotAnOption => "is not one of the options",
            FormProblem::BadDate => "is not a date (YYYY-MM-DD)",
            FormProblem::UnknownField => "is not a field of this form",
        }
    }
}

impl Form {
    /// The submission's answers in the form's order (unanswered optional fields left out), or the
    /// first wrong field's name and what is wrong with it.
    pub fn check(&self, values: &[FormValue]) -> Result<Vec<FormAnswer>, (String, FormProblem)> {
        if let Some(stray) = values.iter().find(|v| !self.fields.iter().any(|f| f.name == v.name)) {
            return Err((stray.name.clone(), FormProblem::UnknownField));
        }
        let mut answers = Vec::with_capacity(self.fields.len());
        for field in &self.fields {
            let value = values.iter().find(|v| v.name == field.name).map(|v| v.value.trim()).unwrap_or_default();
            if value.is_empty() {
                if field.required {
                    return Err((field.name.clone(), FormProblem::Missing));
                }
                continue;
            }
            if let Some(problem) = field.problem(value) {
                return Err((field.name.clone(), problem));
            }
            answers.push(FormAnswer { name: field.name.clone(), label: field.label.clone(), value: value.to_owned() });
        }
        Ok(answers)
    }

    /// What is wrong with a form the model or a tool defined, in English; `None` when it is good.
    pub fn definition_problem(&self) -> Option<String> {
        let count = self.fields.len();
        if count == 0 || count > MAX_FORM_FIELDS {
            return Some(format!("a form has 1 to {MAX_FORM_FIELDS} fields, not {count}"));
        }
        if self.title.chars().count() > MAX_FORM_LABEL_CHARS {
            return Some(format!("the title is longer than {MAX_FORM_LABEL_CHARS} characters"));
        }
        if self.submit_label.as_deref().is_some_and(|l| l.trim().is_empty() || l.chars().count() > 40) {
            return Some("`submit_label` must be 1 to 40 characters".into());
        }
        for (i, f) in self.fields.iter().enumerate() {
            let good_name = (1..=32).contains(&f.name.len())
                && f.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !good_name {
                return Some(format!("field {i}: `name` must be 1 to 32 of a-z, 0-9 and _ (got `{}`)", f.name));
            }
            if self.fields[..i].iter().any(|g| g.name == f.name) {
                return Some(format!("field {i}: the name `{}` is used twice", f.name));
            }
            if f.label.trim().is_empty() || f.label.chars().count() > MAX_FORM_LABEL_CHARS {
                return Some(format!("field `{}`: `label` must be 1 to {MAX_FORM_LABEL_CHARS} characters", f.name));
            }
            match f.kind {
                FieldKind::Select => {
                    if f.options.is_empty() || f.options.len() > MAX_FORM_OPTIONS {
                        return Some(format!("field `{}`: a select has 1 to {MAX_FORM_OPTIONS} options", f.name));
                    }
                    if f.options.iter().any(|o| o.trim().is_empty() || o.chars().count() > MAX_FORM_LABEL_CHARS) {
                        return Some(format!(
                            "field `{}`: every option must be 1 to {MAX_FORM_LABEL_CHARS} characters",
                            f.name
                        ));
                    }
                }
                _ if !f.options.is_empty() => {
                    return Some(format!("field `{}`: only a select has options", f.name));
                }
                _ => {}
            }
        }
        None
    }
}

impl FormField {
    /// What is wrong with a non-empty, trimmed value.
    pub fn problem(&self, value: &str) -> Option<FormProblem> {
        if value.chars().count() > MAX_FORM_VALUE_CHARS {
            return Some(FormProblem::TooLong);
        }
        match self.kind {
            FieldKind::Text => None,
            FieldKind::Email => (!looks_like_email(value)).then_some(FormProblem::BadEmail),
            FieldKind::Phone => (!looks_like_phone(value)).then_some(FormProblem::BadPhone),
            FieldKind::Select => (!self.options.iter().any(|o| o == value)).then_some(FormProblem::NotAnOption),
            FieldKind::Date => (!is_date(value)).then_some(FormProblem::BadDate),
        }
    }
}

/// The visitor's message that a submission stands for: one line per answer, `Label: value`.
pub fn answers_text(answers: &[FormAnswer]) -> String {
    answers.iter().map(|a| format!("{}: {}", a.label, a.value)).collect::<Vec<_>>().join("\n")
}

/// `YYYY-MM-DD`, a real day of the Gregorian calendar (years 1000 to 9999).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num =
        |r: std::ops::Range<usize>| s.get(r).filter(|p| p.bytes().all(|c| c.is_ascii_digit()))?.parse::<u32>().ok();
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else { return false };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    y >= 1000 && (1..=days).contains(&d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, kind: FieldKind, required: bool) -> FormField {
        let options = if kind == FieldKind::Select { vec!["Small".into(), "Large".into()] } else { Vec::new() };
        FormField { name: name.into(), label: name.to_uppercase(), kind, required, options }
    }

    fn form() -> Form {
        Form {
            form_id: "f1".into(),
            title: "Booking".into(),
            fields: vec![
                field("name", FieldKind::Text, true),
                field("email", FieldKind::Email, true),
                field("phone", FieldKind::Phone, false),
                field("size", FieldKind::Select, true),
                field("day", FieldKind::Date, false),
            ],
            submit_label: None,
            fallback_text: "A booking form".into(),
        }
    }

    fn v(pairs: &[(&str, &str)]) -> Vec<FormValue> {
        pairs.iter().map(|(n, v)| FormValue { name: (*n).into(), value: (*v).into() }).collect()
    }

    #[test]
    fn a_good_submission_gives_the_answers_in_the_forms_order() {
        let answers = form()
            .check(&v(&[("size", "Large"), ("email", " ann@example.com "), ("name", "Ann"), ("phone", "")]))
            .unwrap();
        let names: Vec<_> = answers.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["name", "email", "size"]);
        assert_eq!(answers[1].value, "ann@example.com");
        assert_eq!(answers_text(&answers), "NAME: Ann\nEMAIL: ann@example.com\nSIZE: Large");
    }

    #[test]
    fn each_wrong_value_names_its_field() {
        let base = [("name", "Ann"), ("email", "ann@example.com"), ("size", "Small")];
        let with = |name: &str, value: &str| {
            let mut all = v(&base);
            all.retain(|x| x.name != name);
            all.push(FormValue { name: name.into(), value: value.into() });
            form().check(&all).unwrap_err()
        };
        assert_eq!(with("name", "  "), ("name".into(), FormProblem::Missing));
        assert_eq!(with("email", "ann at example"), ("email".into(), FormProblem::BadEmail));
        assert_eq!(with("phone", "call me"), ("phone".into(), FormProblem::BadPhone));
        assert_eq!(with("size", "Huge"), ("size".into(), FormProblem::NotAnOption));
        assert_eq!(with("day", "2026-02-30"), ("day".into(), FormProblem::BadDate));
        assert_eq!(with("day", "30/01/2026"), ("day".into(), FormProblem::BadDate));
        assert_eq!(with("name", &"x".repeat(501)), ("name".into(), FormProblem::TooLong));
        assert_eq!(with("admin", "yes"), ("admin".into(), FormProblem::UnknownField));
        assert!(
            form().check(&v(&[("name", "Ann"), ("email", "a@b.co"), ("size", "Small"), ("day", "2028-02-29")])).is_ok()
        );
    }

    #[test]
    fn definitions_are_checked() {
        assert_eq!(form().definition_problem(), None);
        let mut bad = form();
        bad.fields[1].name = "name".into();
        assert!(bad.definition_problem().unwrap().contains("used twice"));
        let mut bad = form();
        bad.fields[0].name = "Full Name".into();
        assert!(bad.definition_problem().unwrap().contains("`name`"));
        let mut bad = form();
        bad.fields[3].options.clear();
        assert!(bad.definition_problem().unwrap().contains("select"));
        let mut bad = form();
        bad.fields[0].options = vec!["x".into()];
        assert!(bad.definition_problem().unwrap().contains("only a select"));
        let mut bad = form();
        bad.fields = (0..9).map(|i| field(&format!("f{i}"), FieldKind::Text, false)).collect();
        assert!(bad.definition_problem().unwrap().contains("1 to 8"));
    }
}
