//! The language Parley writes its own texts in (stopped, limits, errors, the hand-off button, the
//! demo model's answers): one rule for the whole engine. The visitor's words decide; when they
//! have none (an image without text), the agent's greeting does.

use parley_protocol::LanguageSetting;

/// A language of Parley's own texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    /// Chinese when the text has a CJK ideograph, otherwise English.
    pub fn of(text: &str) -> Lang {
        if text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)) { Lang::Zh } else { Lang::En }
    }

    /// The language an agent speaks where no visitor's words decide it (a mail, a tool's reply):
    /// its language setting, and with `auto` the script of `text` (what the agent has to go on:
    /// the words at hand, else its greeting). Nothing about the agent's field decides it.
    pub fn of_agent(setting: LanguageSetting, text: &str) -> Lang {
        match setting {
            LanguageSetting::ZhHans | LanguageSetting::ZhHant => Lang::Zh,
            // The engine writes English and Chinese only: every other language gets English.
            LanguageSetting::En
            | LanguageSetting::Ja
            | LanguageSetting::Ko
            | LanguageSetting::Es
            | LanguageSetting::Fr
            | LanguageSetting::De
            | LanguageSetting::PtBr
            | LanguageSetting::Ar
            | LanguageSetting::Vi
            | LanguageSetting::Th
            | LanguageSetting::Id => Lang::En,
            LanguageSetting::Auto => Lang::of(text),
        }
    }

    /// The language of `text`, or of `fallback` when `text` is blank.
    pub fn of_or(text: &str, fallback: &str) -> Lang {
        if text.trim().is_empty() { Lang::of(fallback) } else { Lang::of(text) }
    }

    pub fn is_zh(self) -> bool {
        self == Lang::Zh
    }

    /// The text for this language.
    pub fn pick<T>(self, en: T, zh: T) -> T {
        match self {
            Lang::En => en,
            Lang::Zh => zh,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lang;

    #[test]
    fn ideographs_make_it_chinese() {
        assert_eq!(Lang::of("Hello"), Lang::En);
        assert_eq!(Lang::of("优才 QMAS"), Lang::Zh);
        assert_eq!(Lang::of_or("  ", "欢迎"), Lang::Zh);
        assert_eq!(Lang::of_or("hi", "欢迎"), Lang::En);
        assert_eq!(Lang::Zh.pick("Stopped.", "已停止。"), "已停止。");
        // The panel's other languages get the engine's English.
        assert_eq!(Lang::of_agent(parley_protocol::LanguageSetting::Ja, "ようこそ 欢迎"), Lang::En);
        assert_eq!(Lang::of_agent(parley_protocol::LanguageSetting::ZhHant, "Welcome"), Lang::Zh);
    }
}
