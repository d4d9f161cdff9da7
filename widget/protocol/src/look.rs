//! How the panel and its launcher look, and the limits on what an owner may choose: colours,
//! icon, language, size, starter questions.

use serde::{Deserialize, Serialize};

/// Narrowest and widest panel the owner may choose, in CSS pixels.
pub const PANEL_WIDTHS: std::ops::RangeInclusive<u32> = 320..=480;
/// Lowest and tallest panel the owner may choose, in CSS pixels.
pub const PANEL_HEIGHTS: std::ops::RangeInclusive<u32> = 400..=800;
/// Starter questions an agent may offer.
pub const MAX_STARTERS: usize = 4;
/// Longest starter question and launcher label, in characters.
pub const MAX_STARTER_CHARS: usize = 80;
pub const MAX_LAUNCHER_LABEL_CHARS: usize = 24;

/// Light, dark, or as the visitor's system says (`prefers-color-scheme`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorScheme {
    /// Also what an unknown value from a newer server means.
    #[default]
    Light,
    Dark,
    Auto,
}

impl ColorScheme {
    pub const ALL: [ColorScheme; 3] = [ColorScheme::Light, ColorScheme::Dark, ColorScheme::Auto];

    pub fn as_str(self) -> &'static str {
        match self {
            ColorScheme::Light => "light",
            ColorScheme::Dark => "dark",
            ColorScheme::Auto => "auto",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        ColorScheme::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// The picture on the launcher button.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LauncherIcon {
    /// A speech bubble; also what an unknown value means.
    #[default]
    Chat,
    /// A question mark.
    Help,
    /// A sparkle.
    Sparkle,
    /// No picture: the launcher shows its label alone.
    None,
}

impl LauncherIcon {
    pub const ALL: [LauncherIcon; 4] =
        [LauncherIcon::Chat, LauncherIcon::Help, LauncherIcon::Sparkle, LauncherIcon::None];

    pub fn as_str(self) -> &'static str {
        match self {
            LauncherIcon::Chat => "chat",
            LauncherIcon::Help => "help",
            LauncherIcon::Sparkle => "sparkle",
            LauncherIcon::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        LauncherIcon::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// The language of the panel's own words: the agent's choice, or `auto` (the visitor's browser
/// languages decide, see `parley_widget::i18n::choose`). Each travels as its BCP 47 tag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LanguageSetting {
    /// Also what an unknown value means.
    #[default]
    Auto,
    En,
    ZhHans,
    ZhHant,
    Ja,
    Ko,
    Es,
    Fr,
    De,
    /// Portuguese as written in Brazil.
    PtBr,
    Ar,
    Vi,
    Th,
    Id,
}

impl LanguageSetting {
    pub const ALL: [LanguageSetting; 14] = [
        LanguageSetting::Auto,
        LanguageSetting::En,
        LanguageSetting::ZhHans,
        LanguageSetting::ZhHant,
        LanguageSetting::Ja,
        LanguageSetting::Ko,
        LanguageSetting::Es,
        LanguageSetting::Fr,
        LanguageSetting::De,
        LanguageSetting::PtBr,
        LanguageSetting::Ar,
        LanguageSetting::Vi,
        LanguageSetting::Th,
        LanguageSetting::Id,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LanguageSetting::Auto => "auto",
            LanguageSetting::En => "en",
            LanguageSetting::ZhHans => "zh-Hans",
            LanguageSetting::ZhHant => "zh-Hant",
            LanguageSetting::Ja => "ja",
            LanguageSetting::Ko => "ko",
            LanguageSetting::Es => "es",
            LanguageSetting::Fr => "fr",
            LanguageSetting::De => "de",
            LanguageSetting::PtBr => "pt-BR",
            LanguageSetting::Ar => "ar",
            LanguageSetting::Vi => "vi",
            LanguageSetting::Th => "th",
            LanguageSetting::Id => "id",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        LanguageSetting::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// Enumerated settings travel as their names; a name this build does not know (a newer
/// server's) reads as the default, so the configuration still parses.
macro_rules! by_name {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
                Ok(<$t>::parse(&name).unwrap_or_default())
            }
        }
    )*};
}

by_name!(ColorScheme, LauncherIcon, LanguageSetting);

fn default_width() -> u32 {
    380
}

fn default_height() -> u32 {
    640
}

/// Launcher and panel look. Every field after `position` came later and has a default, so a
/// configuration cached from an older server still parses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Theme {
    /// CSS colour of the launcher and accents, `#rrggbb`.
    pub color: String,
    /// `right` or `left` (bottom corner of the host page).
    pub position: String,
    /// Colour of text on `color`, `#rrggbb`; `None`: black or white, whichever contrasts more.
    #[serde(default)]
    pub text_color: Option<String>,
    #[serde(default)]
    pub scheme: ColorScheme,
    #[serde(default)]
    pub launcher_icon: LauncherIcon,
    /// Text beside the launcher's icon; empty: none.
    #[serde(default)]
    pub launcher_label: String,
    /// The open panel's size on a wide screen, in CSS pixels (phones get the whole screen).
    #[serde(default = "default_width")]
    pub width: u32,
    #[serde(default = "default_height")]
    pub height: u32,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            color: "#4f46e5".into(),
            position: "right".into(),
            text_color: None,
            scheme: ColorScheme::Light,
            launcher_icon: LauncherIcon::Chat,
            launcher_label: String::new(),
            width: default_width(),
            height: default_height(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_settings_travel_by_name_and_unknown_ones_fall_back() {
        let theme: Theme = serde_json::from_str(
            r##"{"color":"#123456","position":"left","scheme":"dark","launcher_icon":"sparkle","width":400,"height":500}"##,
        )
        .unwrap();
        assert_eq!(
            (theme.scheme, theme.launcher_icon, theme.width, theme.height),
            (ColorScheme::Dark, LauncherIcon::Sparkle, 400, 500)
        );
        let newer: Theme = serde_json::from_str(
            r##"{"color":"#123456","position":"left","scheme":"sepia","launcher_icon":"rocket"}"##,
        )
        .unwrap();
        assert_eq!((newer.scheme, newer.launcher_icon), (ColorScheme::Light, LauncherIcon::Chat));
        assert_eq!(serde_json::to_string(&LanguageSetting::ZhHant).unwrap(), "\"zh-Hant\"");
        assert_eq!(serde_json::from_str::<LanguageSetting>("\"klingon\"").unwrap(), LanguageSetting::Auto);
        for l in LanguageSetting::ALL {
            assert_eq!(LanguageSetting::parse(l.as_str()), Some(l));
            assert_eq!(serde_json::from_str::<LanguageSetting>(&format!("\"{}\"", l.as_str())).unwrap(), l);
        }
        assert_eq!(serde_json::to_string(&LanguageSetting::PtBr).unwrap(), "\"pt-BR\"");
        assert_eq!(LanguageSetting::parse("ja"), Some(LanguageSetting::Ja));
        // Tags are matched exactly, as the console's select writes them.
        assert_eq!(LanguageSetting::parse("pt-br"), None);
    }
}
