//! The panel's own words: one catalogue per language, the same keys in each (a [`Labels`] value
//! cannot be built without every one of them), and how amounts and dates are written there.
//!
//! Which language: the agent's setting, or with `auto` the visitor's browser languages
//! ([`choose`]). Adding a language is adding a [`Lang`] variant and its catalogue; a right-to-left
//! one also says so in [`Lang::dir`] — the panel's CSS uses logical properties only.
//!
//! Amounts and dates are written by small per-locale rules (`format.rs`, [`Lang::date`],
//! [`Lang::amount`]) rather than by `Intl` or an ICU crate: they are testable off the browser and
//! cost the panel's bundle next to nothing. The bundle need carry English only: a page in another
//! language can bring its catalogue as JSON ([`Labels::from_map`]).

use crate::protocol::{FormProblem, LanguageSetting, LeadProblem, StreamCode};

mod catalogues;
mod format;
#[cfg(test)]
mod tests;

pub use catalogues::{AR, DE, EN, ES, FR, ID, JA, KO, PT_BR, TH, VI, ZH_HANS, ZH_HANT};

/// A language the panel speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    /// Simplified Chinese.
    ZhHans,
    /// Traditional Chinese.
    ZhHant,
    Ja,
    Ko,
    Es,
    Fr,
    De,
    /// Portuguese as written in Brazil, also for every other Portuguese.
    PtBr,
    /// Arabic, written right to left.
    Ar,
    Vi,
    Th,
    Id,
}

impl Lang {
    pub const ALL: [Lang; 13] = [
        Lang::En,
        Lang::ZhHans,
        Lang::ZhHant,
        Lang::Ja,
        Lang::Ko,
        Lang::Es,
        Lang::Fr,
        Lang::De,
        Lang::PtBr,
        Lang::Ar,
        Lang::Vi,
        Lang::Th,
        Lang::Id,
    ];

    /// Its catalogue.
    pub fn labels(self) -> &'static Labels {
        match self {
            Lang::En => &EN,
            Lang::ZhHans => &ZH_HANS,
            Lang::ZhHant => &ZH_HANT,
            Lang::Ja => &JA,
            Lang::Ko => &KO,
            Lang::Es => &ES,
            Lang::Fr => &FR,
            Lang::De => &DE,
            Lang::PtBr => &PT_BR,
            Lang::Ar => &AR,
            Lang::Vi => &VI,
            Lang::Th => &TH,
            Lang::Id => &ID,
        }
    }

    /// BCP 47 tag, for `lang` attributes (the same as the agent's [`LanguageSetting`]).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhHans => "zh-Hans",
            Lang::ZhHant => "zh-Hant",
            Lang::Ja => "ja",
            Lang::Ko => "ko",
            Lang::Es => "es",
            Lang::Fr => "fr",
            Lang::De => "de",
            Lang::PtBr => "pt-BR",
            Lang::Ar => "ar",
            Lang::Vi => "vi",
            Lang::Th => "th",
            Lang::Id => "id",
        }
    }

    /// Simplified Chinese when the text has a CJK ideograph, otherwise English (the console's
    /// guess for a transcript's blocks).
    pub fn of_text(text: &str) -> Lang {
        if text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)) { Lang::ZhHans } else { Lang::En }
    }

    /// Writing direction, for `dir` attributes: right to left for Arabic.
    pub fn dir(self) -> &'static str {
        match self {
            Lang::Ar => "rtl",
            _ => "ltr",
        }
    }

    /// The language of a browser language tag (`zh-TW`, `en-GB`, `es-419`, …), if the panel
    /// speaks it. Every Portuguese (`pt`, `pt-PT`) gets Brazilian Portuguese, the only one there
    /// is; `in`, Indonesian's withdrawn code that old Java-based browsers still send, is read
    /// as `id`.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let tag = tag.trim().to_ascii_lowercase();
        let mut parts = tag.split(['-', '_']);
        match parts.next()? {
            "en" => Some(Lang::En),
            "zh" => {
                let rest: Vec<&str> = parts.collect();
                let traditional = if rest.contains(&"hans") {
                    false
                } else {
                    rest.iter().any(|p| matches!(*p, "hant" | "tw" | "hk" | "mo"))
                };
                Some(if traditional { Lang::ZhHant } else { Lang::ZhHans })
            }
            "ja" => Some(Lang::Ja),
            "ko" => Some(Lang::Ko),
            "es" => Some(Lang::Es),
            "fr" => Some(Lang::Fr),
            "de" => Some(Lang::De),
            "pt" => Some(Lang::PtBr),
            "ar" => Some(Lang::Ar),
            "vi" => Some(Lang::Vi),
            "th" => Some(Lang::Th),
            "id" | "in" => Some(Lang::Id),
            _ => None,
        }
    }

    /// The language of the agent's setting; `None` for `auto`.
    pub fn of_setting(setting: LanguageSetting) -> Option<Lang> {
        Some(match setting {
            LanguageSetting::Auto => return None,
            LanguageSetting::En => Lang::En,
            LanguageSetting::ZhHans => Lang::ZhHans,
            LanguageSetting::ZhHant => Lang::ZhHant,
            LanguageSetting::Ja => Lang::Ja,
            LanguageSetting::Ko => Lang::Ko,
            LanguageSetting::Es => Lang::Es,
            LanguageSetting::Fr => Lang::Fr,
            LanguageSetting::De => Lang::De,
            LanguageSetting::PtBr => Lang::PtBr,
            LanguageSetting::Ar => Lang::Ar,
            LanguageSetting::Vi => Lang::Vi,
            LanguageSetting::Th => Lang::Th,
            LanguageSetting::Id => Lang::Id,
        })
    }
}

/// The panel's language: the agent's setting, or with `auto` the first of the visitor's browser
/// languages (`navigator.languages`, most wanted first) the panel speaks — zh-TW, zh-HK, zh-MO
/// and zh-Hant get Traditional Chinese, other Chinese Simplified — else English.
pub fn choose(setting: LanguageSetting, browser: &[String]) -> Lang {
    Lang::of_setting(setting).or_else(|| browser.iter().find_map(|t| Lang::from_tag(t))).unwrap_or(Lang::En)
}

/// The catalogue's type: a struct with one `&'static str` per key (so no catalogue can miss
/// one), and the list of its entries.
macro_rules! catalogue {
    ($($(#[$doc:meta])* $key:ident,)*) => {
        /// Every word of the panel's chrome, in one language.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Labels {
            $($(#[$doc])* pub $key: &'static str,)*
        }

        impl Labels {
            /// Every key, in the catalogue's order.
            pub const KEYS: &'static [&'static str] = &[$(stringify!($key),)*];

            /// `(key, text)` of every entry.
            pub fn entries(&self) -> Vec<(&'static str, &'static str)> {
                vec![$((stringify!($key), self.$key),)*]
            }

            /// A catalogue read from `key → text` (the JSON the page carries for a language other
            /// than English), or the first key it lacks. Keys it does not know are ignored (a
            /// newer server's). The texts are leaked to get `&'static str`: the panel calls this
            /// once per page, whose life the words share, so nothing grows.
            pub fn from_map(map: &std::collections::BTreeMap<String, String>) -> Result<Labels, String> {
                if let Some(missing) = Self::KEYS.iter().find(|k| !map.contains_key(**k)) {
                    return Err(format!("the catalogue has no `{missing}`"));
                }
                let text = |key: &str| -> &'static str { Box::leak(map[key].clone().into_boxed_str()) };
                Ok(Labels { $($key: text(stringify!($key)),)* })
            }
        }
    };
}

catalogue! {
    placeholder,
    send,
    stop,
    close,
    /// The message list's name for screen readers.
    conversation,
    new_conversation,
    demo_badge,
    demo_hint,
    using_tool,
    tool_failed,
    /// The assistant's typing dots, for screen readers.
    writing,
    stopped,
    interrupted,
    /// Sends the question of an interrupted answer again.
    retry,
    /// The starter questions' group.
    starters,
    /// The quick replies under an answer, as a group.
    quick_replies,
    /// A form under an answer without a title of its own (and its sent answers).
    form,
    /// A required field of such a form left empty.
    form_missing,
    /// Any other wrong answer in such a form (an email address, a phone number, a date…).
    form_invalid,
    /// The visitor wrote before filling in the agent's pre-chat form.
    prechat_first,
    lead_title,
    lead_name,
    lead_email,
    lead_phone,
    lead_message,
    lead_submit,
    lead_cancel,
    lead_done,
    lead_name_missing,
    lead_name_too_long,
    lead_no_contact,
    lead_bad_email,
    lead_bad_phone,
    lead_message_too_long,
    send_first,
    waiting_human,
    busy,
    rate_limited,
    offline,
    /// A call to the server failed (no connection, an unexpected answer).
    error_network,
    error_too_long,
    /// The model could not answer.
    error_unavailable,
    error_max_turns,
    error_budget,
    error_time_limit,
    error_generic,
    /// The escalation block's button.
    escalate,
    expires_in,
    paid,
    expired,
    pay_alipay,
    pay_wechat,
    pay_card,
    read_more,
    /// The citations block's name for screen readers.
    sources,
    person_joined,
    back_to_bot,
    closed,
    /// The agent only talks to visitors the website signed in.
    sign_in_required,
    operator_typing,
    attach_image,
    remove_image,
    image_alt,
    image_type,
    image_too_large,
    image_limit,
    image_unavailable,
    /// The thumbs under an answer, as a group.
    rate_answer,
    rate_up,
    rate_down,
    /// The comment box after a thumbs down.
    rate_comment,
    rate_send,
    rate_thanks,
    /// The 1-to-5 rating of a conversation a person closed.
    rate_conversation,
    /// The escalation button outside business hours.
    leave_message,
    /// The line under the header outside business hours (a time follows).
    away_back,
    /// The same when the time is not known.
    away_now,
    /// Asks for the transcript by email.
    email_transcript,
    /// Followed by the (masked) address.
    email_sent,
    /// Followed by the (masked) address a code was mailed to, before the transcript goes there.
    email_code_sent,
    /// The field for that code, and its button.
    email_code,
    email_confirm,
}

impl Labels {
    /// A lead form problem in this language.
    pub fn lead_problem(&self, problem: LeadProblem) -> &'static str {
        match problem {
            LeadProblem::NameMissing => self.lead_name_missing,
            LeadProblem::NameTooLong => self.lead_name_too_long,
            LeadProblem::NoContact => self.lead_no_contact,
            LeadProblem::BadEmail => self.lead_bad_email,
            LeadProblem::BadPhone => self.lead_bad_phone,
            LeadProblem::MessageTooLong => self.lead_message_too_long,
        }
    }

    /// What a form's field says when its answer is wrong.
    pub fn form_problem(&self, problem: FormProblem) -> &'static str {
        match problem {
            FormProblem::Missing => self.form_missing,
            FormProblem::BadEmail => self.lead_bad_email,
            FormProblem::BadPhone => self.lead_bad_phone,
            _ => self.form_invalid,
        }
    }

    /// What a turn that ended early says, by its code (the server's own words are English or
    /// Chinese; these follow the panel's language).
    pub fn stream_error(&self, code: &StreamCode) -> &'static str {
        match code {
            StreamCode::UserAborted => self.stopped,
            StreamCode::MaxTurnsReached => self.error_max_turns,
            StreamCode::BudgetExceeded => self.error_budget,
            StreamCode::TimeLimitReached => self.error_time_limit,
            StreamCode::RateLimited | StreamCode::UpstreamRejected | StreamCode::UpstreamUnavailable => {
                self.error_unavailable
            }
            StreamCode::InternalError | StreamCode::Other(_) => self.error_generic,
        }
    }

    /// A payment method's name.
    pub fn payment_method(&self, method: &str) -> String {
        match method {
            "ALIPAY" => self.pay_alipay.to_owned(),
            "WECHAT" => self.pay_wechat.to_owned(),
            "CREDIT_CARD" => self.pay_card.to_owned(),
            other => other.to_owned(),
        }
    }
}
