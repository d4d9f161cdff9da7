//! The panel's own words: one catalogue per language, the same keys in each (a [`Labels`] value
//! cannot be built without every one of them), and how amounts and dates are written there.
//!
//! Which language: the agent's setting, or with `auto` the visitor's browser languages
//! ([`choose`]). Adding a language is adding a [`Lang`] variant and its catalogue; a right-to-left
//! one also says so in [`Lang::dir`] — the panel's CSS uses logical properties only.
//!
//! Amounts and dates are written by small per-locale rules here rather than by `Intl` or an ICU
//! crate: they are testable off the browser and cost the panel's bundle next to nothing.

use crate::protocol::{LanguageSetting, LeadProblem, StreamCode};

mod catalogues;

pub use catalogues::{EN, ZH_HANS, ZH_HANT};

/// A language the panel speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    /// Simplified Chinese.
    ZhHans,
    /// Traditional Chinese.
    ZhHant,
}

impl Lang {
    pub const ALL: [Lang; 3] = [Lang::En, Lang::ZhHans, Lang::ZhHant];

    /// Its catalogue.
    pub fn labels(self) -> &'static Labels {
        match self {
            Lang::En => &EN,
            Lang::ZhHans => &ZH_HANS,
            Lang::ZhHant => &ZH_HANT,
        }
    }

    /// BCP 47 tag, for `lang` attributes.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhHans => "zh-Hans",
            Lang::ZhHant => "zh-Hant",
        }
    }

    /// Simplified Chinese when the text has a CJK ideograph, otherwise English (the console's
    /// guess for a transcript's blocks).
    pub fn of_text(text: &str) -> Lang {
        if text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)) { Lang::ZhHans } else { Lang::En }
    }

    /// Writing direction, for `dir` attributes.
    pub fn dir(self) -> &'static str {
        "ltr"
    }

    /// The language of a browser language tag (`zh-TW`, `en-GB`, …), if the panel speaks it.
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
            _ => None,
        }
    }

    /// A date as the tools give it (`2025-03-01`, maybe with a time after it) written for the
    /// language: `Mar 1, 2025`, `2025年3月1日`. Anything else is shown as it is.
    pub fn date(self, text: &str) -> String {
        let Some((y, m, d)) = parse_date(text) else { return text.to_owned() };
        const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        match self {
            Lang::En => format!("{} {d}, {y}", MONTHS[(m - 1) as usize]),
            Lang::ZhHans | Lang::ZhHant => format!("{y}年{m}月{d}日"),
        }
    }

    /// An amount in minor units (cents, fen) with its currency: `HK$1,234.50`, `1,234.50 THB`.
    /// English and both Chinese locales group thousands with commas and put the symbol first.
    pub fn amount(self, amount_minor: i64, currency: &str) -> String {
        let symbol = match currency {
            "CNY" => "¥",
            "HKD" => "HK$",
            "USD" => "US$",
            "EUR" => "€",
            "GBP" => "£",
            "TWD" => "NT$",
            _ => "",
        };
        let sign = if amount_minor < 0 { "-" } else { "" };
        let abs = amount_minor.unsigned_abs();
        let digits = (abs / 100).to_string();
        let mut major = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                major.push(',');
            }
            major.push(c);
        }
        let minor = abs % 100;
        if symbol.is_empty() {
            format!("{sign}{major}.{minor:02} {currency}")
        } else {
            format!("{sign}{symbol}{major}.{minor:02}")
        }
    }
}

fn parse_date(text: &str) -> Option<(u32, u32, u32)> {
    let head = text.trim().get(..10)?;
    let mut parts = head.split('-');
    let y: u32 = parts.next().filter(|p| p.len() == 4)?.parse().ok()?;
    let m: u32 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    let d: u32 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

/// The panel's language: the agent's setting, or with `auto` the first of the visitor's browser
/// languages (`navigator.languages`, most wanted first) the panel speaks — zh-TW, zh-HK, zh-MO
/// and zh-Hant get Traditional Chinese, other Chinese Simplified — else English.
pub fn choose(setting: LanguageSetting, browser: &[String]) -> Lang {
    match setting {
        LanguageSetting::En => Lang::En,
        LanguageSetting::ZhHans => Lang::ZhHans,
        LanguageSetting::ZhHant => Lang::ZhHant,
        LanguageSetting::Auto => browser.iter().find_map(|t| Lang::from_tag(t)).unwrap_or(Lang::En),
    }
}

/// The visitor's browser languages, most wanted first (empty off the browser).
#[cfg(feature = "panel")]
pub fn browser_languages() -> Vec<String> {
    #[cfg(target_arch = "wasm32")]
    {
        let Some(navigator) = web_sys::window().map(|w| w.navigator()) else { return Vec::new() };
        let mut list: Vec<String> = navigator.languages().iter().filter_map(|v| v.as_string()).collect();
        if list.is_empty()
            && let Some(one) = navigator.language()
        {
            list.push(one);
        }
        list
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        Vec::new()
    }
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
            /// `(key, text)` of every entry.
            pub fn entries(&self) -> Vec<(&'static str, &'static str)> {
                vec![$((stringify!($key), self.$key),)*]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_catalogue_has_every_key_and_no_empty_string() {
        // The type makes every catalogue carry every key; this checks the values.
        for lang in Lang::ALL {
            let all = lang.labels().entries();
            assert_eq!(all.len(), EN.entries().len());
            for (key, value) in all {
                assert!(!value.trim().is_empty(), "{lang:?}.{key} is empty");
            }
        }
    }

    #[test]
    fn traditional_is_not_simplified() {
        // Characters with different Simplified and Traditional forms: no Traditional string
        // carries a Simplified one, and every Simplified string with one is written differently.
        const SIMPLIFIED_ONLY: &str =
            "输发关话闭对内离线演时应实处断图协续议择请连网这为们语给问题单试额钮务闻阅读顾户邮须页过钟";
        let hans = ZH_HANS.entries();
        for ((key, hant), (_, simplified)) in ZH_HANT.entries().into_iter().zip(hans) {
            assert!(!hant.chars().any(|c| SIMPLIFIED_ONLY.contains(c)), "zh-Hant {key}: {hant}");
            if simplified.chars().any(|c| SIMPLIFIED_ONLY.contains(c)) {
                assert_ne!(hant, simplified, "zh-Hant {key} is the Simplified text");
            }
        }
        assert_ne!(ZH_HANT.send, ZH_HANS.send);
        assert_eq!(ZH_HANT.placeholder, "輸入訊息…");
    }

    #[test]
    fn the_language_comes_from_the_setting_or_the_browser() {
        use LanguageSetting as S;
        assert_eq!(choose(S::Auto, &tags(&["zh-TW", "en"])), Lang::ZhHant);
        assert_eq!(choose(S::Auto, &tags(&["zh-HK"])), Lang::ZhHant);
        assert_eq!(choose(S::Auto, &tags(&["zh-MO"])), Lang::ZhHant);
        assert_eq!(choose(S::Auto, &tags(&["zh-Hant"])), Lang::ZhHant);
        assert_eq!(choose(S::Auto, &tags(&["zh-Hant-TW"])), Lang::ZhHant);
        assert_eq!(choose(S::Auto, &tags(&["zh-Hans-HK"])), Lang::ZhHans);
        assert_eq!(choose(S::Auto, &tags(&["zh-CN", "zh-TW"])), Lang::ZhHans);
        assert_eq!(choose(S::Auto, &tags(&["zh"])), Lang::ZhHans);
        assert_eq!(choose(S::Auto, &tags(&["zh_SG"])), Lang::ZhHans);
        assert_eq!(choose(S::Auto, &tags(&["en-GB", "zh-TW"])), Lang::En);
        // The first language the panel speaks wins; none: English.
        assert_eq!(choose(S::Auto, &tags(&["fr-FR", "zh-TW"])), Lang::ZhHant);
        assert_eq!(choose(S::Auto, &tags(&["fr", "de"])), Lang::En);
        assert_eq!(choose(S::Auto, &[]), Lang::En);
        // The agent's own choice beats the browser.
        assert_eq!(choose(S::ZhHans, &tags(&["zh-TW"])), Lang::ZhHans);
        assert_eq!(choose(S::En, &tags(&["zh-TW"])), Lang::En);
        assert_eq!(choose(S::ZhHant, &tags(&["en-US"])), Lang::ZhHant);
    }

    #[test]
    fn amounts_and_dates_are_written_for_the_language() {
        assert_eq!(Lang::En.amount(12_345_678, "HKD"), "HK$123,456.78");
        assert_eq!(Lang::ZhHans.amount(5_000, "CNY"), "¥50.00");
        assert_eq!(Lang::ZhHant.amount(-100_000, "TWD"), "-NT$1,000.00");
        assert_eq!(Lang::En.amount(99, "THB"), "0.99 THB");
        assert_eq!(Lang::En.date("2025-03-01"), "Mar 1, 2025");
        assert_eq!(Lang::ZhHans.date("2025-03-01T08:00:00Z"), "2025年3月1日");
        assert_eq!(Lang::ZhHant.date("2025-12-31"), "2025年12月31日");
        assert_eq!(Lang::En.date("yesterday"), "yesterday");
        assert_eq!(Lang::En.date("2025-13-01"), "2025-13-01");
    }

    #[test]
    fn errors_and_lead_problems_follow_the_language() {
        assert_eq!(ZH_HANT.stream_error(&StreamCode::BudgetExceeded), ZH_HANT.error_budget);
        assert_eq!(EN.lead_problem(LeadProblem::BadEmail), LeadProblem::BadEmail.english());
        assert_eq!(ZH_HANT.payment_method("ALIPAY"), "支付寶");
        assert_eq!(EN.payment_method("PAYPAL"), "PAYPAL");
    }
}
