//! An agent as typed — in the console's form, on the command line, in the demo seed — parsed
//! into a [`NewAgent`] the store can write, or refused with a message per wrong field. The one
//! place the rules of an agent live; the tool catalogue comes in as data, so the store does not
//! depend on the engine.

use parley_protocol::{
    ColorScheme, LanguageSetting, LauncherIcon, MAX_LAUNCHER_LABEL_CHARS, MAX_STARTER_CHARS, MAX_STARTERS,
    PANEL_HEIGHTS, PANEL_WIDTHS, Theme,
};

use super::domain::{Domain, DomainText};
use super::fields::{AgentKey, AllowedOrigins, Capabilities, FieldError, ModelSettings, RawModel};
use super::{AgentLimits, NewAgent};

/// The tools an agent can be given, and the capability each needs: `(tool, capability)`.
pub type Catalogue = [(String, String)];

/// An agent as typed: nothing checked yet. Empty text means "none" where a field is optional.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentInput {
    /// The key in the embed snippet.
    pub key: String,
    /// The name visitors see.
    pub name: String,
    /// What the agent is for (`help_center`, `immigration`, …).
    pub vertical: String,
    /// The capabilities, which decide the tools and the blocks.
    pub capabilities: Vec<String>,
    /// Only these tools (among those the capabilities allow); `None`: all of them.
    pub enabled_tools: Option<Vec<String>>,
    /// `demo`, `openai` or `anthropic`.
    pub provider: String,
    /// The API's base URL (needed by `openai` and `anthropic`).
    pub base_url: String,
    /// The API key.
    pub api_key: String,
    /// The model's name.
    pub model: String,
    /// The model used when the first fails.
    pub fallback_model: String,
    /// What the model is told first.
    pub system_prompt: String,
    /// The first message visitors see.
    pub greeting: String,
    /// `#rrggbb`.
    pub theme_color: String,
    /// `left` or `right`.
    pub launcher_position: String,
    /// Text on the theme colour, `#rrggbb`; empty: chosen for contrast.
    pub text_color: String,
    /// `light`, `dark` or `auto`; empty: light.
    pub color_scheme: String,
    /// `chat`, `help`, `sparkle` or `none`; empty: chat.
    pub launcher_icon: String,
    /// Text beside the launcher's icon; empty: none.
    pub launcher_label: String,
    /// The panel's width and height in CSS pixels, as typed; empty: 380 × 640.
    pub panel_width: String,
    pub panel_height: String,
    /// `auto`, `en`, `zh-Hans` or `zh-Hant`; empty: auto.
    pub language: String,
    /// The input's placeholder; empty: the panel's own.
    pub placeholder: String,
    /// Questions offered as chips before the first message; blank ones are dropped.
    pub starters: Vec<String>,
    /// The pre-chat form's title, and `off`, `optional` or `required` for the visitor's name,
    /// email address and phone number (empty: off).
    pub prechat_title: String,
    pub prechat_name: String,
    pub prechat_email: String,
    pub prechat_phone: String,
    /// Origins that may embed the agent; empty: any.
    pub allowed_origins: Vec<String>,
    /// Its services, official sites and reference news, one per line.
    pub domain: DomainText,
}

impl NewAgent {
    /// The agent the input describes, or everything wrong with it, by field, in the order of the
    /// form. `catalogue` is every tool an agent can be given.
    pub fn parse(input: &AgentInput, catalogue: &Catalogue) -> Result<NewAgent, Vec<FieldError>> {
        let mut errors = Errors(Vec::new());
        let key = errors.one(AgentKey::parse(&input.key));
        let name = input.name.trim();
        if name.is_empty() || name.chars().count() > 80 {
            errors.0.push(FieldError::new("name", "A name of 1 to 80 characters."));
        }
        if input.vertical.trim().is_empty() || input.vertical.chars().count() > 40 {
            errors.0.push(FieldError::new("vertical", "A vertical of 1 to 40 characters (e.g. help_center)."));
        }
        let can = errors.all(Capabilities::parse(&input.capabilities, input.enabled_tools.as_deref(), catalogue));
        let model = errors.all(ModelSettings::parse(RawModel {
            provider: &input.provider,
            base_url: &input.base_url,
            api_key: &input.api_key,
            model: &input.model,
            fallback_model: &input.fallback_model,
        }));
        if input.system_prompt.chars().count() > super::behaviour::MAX_PROMPT_CHARS {
            errors.0.push(FieldError::new("system_prompt", "At most 20,000 characters."));
        }
        if input.greeting.chars().count() > 500 {
            errors.0.push(FieldError::new("greeting", "At most 500 characters."));
        }
        let theme = errors.all(theme(input));
        let language = match input.language.trim() {
            "" => Some(LanguageSetting::Auto),
            text => LanguageSetting::parse(text).or_else(|| {
                errors.0.push(FieldError::new(
                    "language",
                    "auto, en, zh-Hans, zh-Hant, ja, ko, es, fr, de, pt-BR, ar, vi, th or id.",
                ));
                None
            }),
        };
        let placeholder = input.placeholder.trim();
        if placeholder.chars().count() > 80 {
            errors.0.push(FieldError::new("placeholder", "At most 80 characters."));
        }
        let starters: Vec<String> =
            input.starters.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).map(str::to_owned).collect();
        if starters.len() > MAX_STARTERS {
            errors.0.push(FieldError::new("starters", format!("At most {MAX_STARTERS} starter questions.")));
        } else if starters.iter().any(|s| s.chars().count() > MAX_STARTER_CHARS) {
            let message = format!("A starter question has at most {MAX_STARTER_CHARS} characters.");
            errors.0.push(FieldError::new("starters", message));
        }
        let prechat = prechat(input, &mut errors.0);
        let origins = errors.one(AllowedOrigins::parse(&input.allowed_origins));
        let domain = errors.all(Domain::parse(&input.domain));
        let (Some(key), Some(can), Some(model), Some(theme), Some(language), Some(origins), Some(domain)) =
            (key, can, model, theme, language, origins, domain)
        else {
            return Err(errors.0);
        };
        if !errors.0.is_empty() {
            return Err(errors.0);
        }
        let (capabilities, enabled_tools) = can.into_parts();
        Ok(NewAgent {
            public_key: key.as_str().to_owned(),
            name: name.to_owned(),
            vertical: input.vertical.trim().to_owned(),
            capabilities,
            enabled_tools,
            provider: model.into_inner(),
            system_prompt: input.system_prompt.clone(),
            greeting: input.greeting.trim().to_owned(),
            theme,
            language,
            placeholder: placeholder.to_owned(),
            starters,
            prechat,
            allowed_origins: origins.into_inner(),
            domain,
        })
    }
}

/// The pre-chat form as typed; a wrong choice or too long a title is named by its field.
fn prechat(input: &AgentInput, errors: &mut Vec<FieldError>) -> parley_protocol::Prechat {
    use parley_protocol::{Ask, MAX_FORM_LABEL_CHARS};
    let mut ask = |field: &'static str, text: &str| {
        if text.trim().is_empty() {
            return Ask::Off;
        }
        Ask::parse(text).unwrap_or_else(|| {
            errors.push(FieldError::new(field, "Off, optional or required."));
            Ask::Off
        })
    };
    let (name, email, phone) = (
        ask("prechat_name", &input.prechat_name),
        ask("prechat_email", &input.prechat_email),
        ask("prechat_phone", &input.prechat_phone),
    );
    let title = input.prechat_title.trim();
    if title.chars().count() > MAX_FORM_LABEL_CHARS {
        errors.push(FieldError::new("prechat_title", format!("At most {MAX_FORM_LABEL_CHARS} characters.")));
    }
    parley_protocol::Prechat { title: title.to_owned(), name, email, phone }
}

/// The `max_tokens` an agent may set: what every provider takes.
pub const MIN_MAX_TOKENS: u32 = 16;
pub const MAX_MAX_TOKENS: u32 = 100_000;

impl AgentLimits {
    /// The guards as typed: a budget, and tool hops, a daily cap and `max_tokens` as text (empty:
    /// the default).
    pub fn parse(
        budget_usd: f64,
        max_turns: &str,
        daily_cap_usd: &str,
        max_tokens: &str,
    ) -> Result<AgentLimits, Vec<FieldError>> {
        let mut errors = Vec::new();
        if !(budget_usd.is_finite() && budget_usd > 0.0 && budget_usd <= 1000.0) {
            errors.push(FieldError::new("budget_usd", "A budget above 0 and at most 1000 US dollars."));
        }
        let max_turns = match max_turns.trim() {
            "" => None,
            text => match text.parse::<u32>() {
                Ok(n) if (1..=50).contains(&n) => Some(n),
                _ => {
                    let message = "Empty (3, or 15 for a coordinator) or a whole number from 1 to 50.";
                    errors.push(FieldError::new("max_turns", message));
                    None
                }
            },
        };
        let daily_cap_usd = match daily_cap_usd.trim() {
            "" => None,
            text => match text.parse::<f64>() {
                Ok(n) if n.is_finite() && n > 0.0 && n <= 100_000.0 => Some(n),
                _ => {
                    let message = "Empty (no cap) or an amount above 0 and at most 100000 US dollars.";
                    errors.push(FieldError::new("daily_cap_usd", message));
                    None
                }
            },
        };
        let max_tokens = match max_tokens.trim() {
            "" => None,
            text => match text.parse::<u32>() {
                Ok(n) if (MIN_MAX_TOKENS..=MAX_MAX_TOKENS).contains(&n) => Some(n),
                _ => {
                    let message = format!(
                        "Empty (the server's default, 4096) or a whole number from {MIN_MAX_TOKENS} to {MAX_MAX_TOKENS}."
                    );
                    errors.push(FieldError::new("max_tokens", message));
                    None
                }
            },
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(AgentLimits { budget_usd, max_turns, daily_cap_usd, max_tokens })
    }
}

/// `#rrggbb`, in lower case.
fn hex_color(text: &str) -> Option<String> {
    let text = text.trim();
    (text.len() == 7 && text.starts_with('#') && text[1..].bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| text.to_lowercase())
}

/// A size in CSS pixels within `range`; empty: `default`.
fn pixels(text: &str, range: std::ops::RangeInclusive<u32>, default: u32) -> Option<u32> {
    match text.trim().trim_end_matches("px") {
        "" => Some(default),
        n => n.trim().parse::<u32>().ok().filter(|n| range.contains(n)),
    }
}

/// The launcher's and the panel's look: colours (stored in lower case), scheme, side, icon and
/// label, size.
fn theme(input: &AgentInput) -> Result<Theme, Vec<FieldError>> {
    let mut errors = Vec::new();
    let defaults = Theme::default();
    let color = hex_color(&input.theme_color);
    if color.is_none() {
        errors.push(FieldError::new("theme_color", "A colour like #4f46e5."));
    }
    let text_color = match input.text_color.trim() {
        "" => None,
        text => {
            let parsed = hex_color(text);
            if parsed.is_none() {
                errors.push(FieldError::new("text_color", "Empty (chosen for contrast) or a colour like #ffffff."));
            }
            parsed
        }
    };
    let scheme = match input.color_scheme.trim() {
        "" => Some(ColorScheme::Light),
        text => ColorScheme::parse(text),
    };
    if scheme.is_none() {
        errors.push(FieldError::new("color_scheme", "light, dark or auto."));
    }
    if !matches!(input.launcher_position.as_str(), "left" | "right") {
        errors.push(FieldError::new("launcher_position", "left or right."));
    }
    let icon = match input.launcher_icon.trim() {
        "" => Some(LauncherIcon::Chat),
        text => LauncherIcon::parse(text),
    };
    if icon.is_none() {
        errors.push(FieldError::new("launcher_icon", "chat, help, sparkle or none."));
    }
    let label = input.launcher_label.trim();
    if label.chars().count() > MAX_LAUNCHER_LABEL_CHARS {
        let message = format!("A launcher label has at most {MAX_LAUNCHER_LABEL_CHARS} characters.");
        errors.push(FieldError::new("launcher_label", message));
    } else if label.is_empty() && icon == Some(LauncherIcon::None) {
        errors.push(FieldError::new("launcher_label", "A launcher without an icon needs a label."));
    }
    let width = pixels(&input.panel_width, PANEL_WIDTHS, defaults.width);
    if width.is_none() {
        let message =
            format!("Empty (380) or a whole number of pixels from {} to {}.", PANEL_WIDTHS.start(), PANEL_WIDTHS.end());
        errors.push(FieldError::new("panel_width", message));
    }
    let height = pixels(&input.panel_height, PANEL_HEIGHTS, defaults.height);
    if height.is_none() {
        let message = format!(
            "Empty (640) or a whole number of pixels from {} to {}.",
            PANEL_HEIGHTS.start(),
            PANEL_HEIGHTS.end()
        );
        errors.push(FieldError::new("panel_height", message));
    }
    let (Some(color), Some(scheme), Some(launcher_icon), Some(width), Some(height), true) =
        (color, scheme, icon, width, height, errors.is_empty())
    else {
        return Err(errors);
    };
    Ok(Theme {
        color,
        position: input.launcher_position.clone(),
        text_color,
        scheme,
        launcher_icon,
        launcher_label: label.to_owned(),
        width,
        height,
    })
}

/// The errors found so far.
struct Errors(Vec<FieldError>);

impl Errors {
    fn one<T>(&mut self, parsed: Result<T, FieldError>) -> Option<T> {
        parsed.map_err(|e| self.0.push(e)).ok()
    }

    fn all<T>(&mut self, parsed: Result<T, Vec<FieldError>>) -> Option<T> {
        parsed.map_err(|e| self.0.extend(e)).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> Vec<(String, String)> {
        [("escalate_to_human", "ticket_escalation"), ("search_knowledge", "knowledge_search")]
            .iter()
            .map(|(t, c)| (t.to_string(), c.to_string()))
            .collect()
    }

    fn good() -> AgentInput {
        AgentInput {
            key: " shop-help ".into(),
            name: "Shop help".into(),
            vertical: "help_center".into(),
            capabilities: vec!["ticket_escalation".into()],
            provider: "demo".into(),
            model: "parley-demo".into(),
            theme_color: "#4F46E5".into(),
            launcher_position: "right".into(),
            allowed_origins: vec!["https://shop.example.com".into(), "http://127.0.0.1:3001/".into()],
            ..Default::default()
        }
    }

    fn fields(input: &AgentInput) -> Vec<String> {
        NewAgent::parse(input, &catalogue()).err().unwrap_or_default().into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn accepts_a_good_input_and_tidies_it() {
        let new = NewAgent::parse(&good(), &catalogue()).expect("valid");
        assert_eq!(new.public_key, "shop-help");
        assert_eq!(new.theme.color, "#4f46e5");
        assert_eq!(new.allowed_origins, ["https://shop.example.com", "http://127.0.0.1:3001"]);
        assert_eq!((new.provider.base_url, new.provider.api_key), (None, None));
    }

    #[test]
    fn names_each_wrong_field() {
        let mut input = good();
        input.key = "Bad Key".into();
        input.capabilities.push("teleport".into());
        input.enabled_tools = Some(vec!["search_knowledge".into()]);
        input.provider = "openai".into();
        input.base_url = "ftp://x".into();
        input.theme_color = "red".into();
        input.launcher_position = "top".into();
        input.allowed_origins = vec!["https://x.example.com/path".into()];
        assert_eq!(
            fields(&input),
            ["key", "capabilities", "enabled_tools", "base_url", "theme_color", "launcher_position", "allowed_origins"]
        );
        let empty = AgentInput { name: " ".into(), vertical: String::new(), model: String::new(), ..good() };
        assert_eq!(fields(&empty), ["name", "vertical", "model"]);
    }

    #[test]
    fn the_look_is_checked_and_stored_tidy() {
        let input = AgentInput {
            text_color: " #FFFFFF ".into(),
            color_scheme: "dark".into(),
            launcher_icon: "sparkle".into(),
            launcher_label: " Ask us ".into(),
            panel_width: "420".into(),
            panel_height: "720px".into(),
            language: "zh-Hant".into(),
            placeholder: " Your question… ".into(),
            starters: vec!["How much?".into(), "  ".into(), "Opening hours?".into()],
            ..good()
        };
        let new = NewAgent::parse(&input, &catalogue()).expect("valid");
        assert_eq!(new.theme.text_color.as_deref(), Some("#ffffff"));
        assert_eq!((new.theme.scheme, new.theme.launcher_icon), (ColorScheme::Dark, LauncherIcon::Sparkle));
        assert_eq!((new.theme.launcher_label.as_str(), new.theme.width, new.theme.height), ("Ask us", 420, 720));
        assert_eq!((new.language, new.placeholder.as_str()), (LanguageSetting::ZhHant, "Your question…"));
        assert_eq!(new.starters, ["How much?", "Opening hours?"], "blank starters are dropped");
        // Empty means the defaults.
        let plain = NewAgent::parse(&good(), &catalogue()).expect("valid");
        assert_eq!(plain.theme, Theme { color: "#4f46e5".into(), ..Theme::default() });
        assert_eq!(plain.language, LanguageSetting::Auto);
    }

    #[test]
    fn each_wrong_look_field_is_named() {
        let input = AgentInput {
            text_color: "white".into(),
            color_scheme: "sepia".into(),
            launcher_icon: "rocket".into(),
            launcher_label: "Chat with our friendly team now".into(),
            panel_width: "1000".into(),
            panel_height: "tall".into(),
            language: "klingon".into(),
            placeholder: "x".repeat(81),
            starters: (1..=5).map(|i| format!("Question {i}?")).collect(),
            ..good()
        };
        assert_eq!(
            fields(&input),
            [
                "text_color",
                "color_scheme",
                "launcher_icon",
                "launcher_label",
                "panel_width",
                "panel_height",
                "language",
                "placeholder",
                "starters"
            ]
        );
        let narrow = AgentInput { panel_width: "319".into(), panel_height: "801".into(), ..good() };
        assert_eq!(fields(&narrow), ["panel_width", "panel_height"]);
        let bounds = AgentInput { panel_width: "320".into(), panel_height: "800".into(), ..good() };
        assert!(fields(&bounds).is_empty());
        let long_starter = AgentInput { starters: vec!["?".repeat(81)], ..good() };
        assert_eq!(fields(&long_starter), ["starters"]);
        let bare = AgentInput { launcher_icon: "none".into(), ..good() };
        assert_eq!(fields(&bare), ["launcher_label"], "no icon and no label");
        let bad_colour = AgentInput { theme_color: "#12345g".into(), ..good() };
        assert_eq!(fields(&bad_colour), ["theme_color"]);
    }

    #[test]
    fn limits_are_checked_as_typed() {
        let fields = |budget, turns, cap, tokens| -> Vec<String> {
            AgentLimits::parse(budget, turns, cap, tokens)
                .err()
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.field)
                .collect()
        };
        assert_eq!(fields(-1.0, "0", "lots", "15"), ["budget_usd", "max_turns", "daily_cap_usd", "max_tokens"]);
        assert_eq!(fields(f64::NAN, "51", "0", "100001"), ["budget_usd", "max_turns", "daily_cap_usd", "max_tokens"]);
        assert_eq!(fields(0.5, "", "", "many"), ["max_tokens"]);
        let limits = AgentLimits::parse(0.5, " 7 ", "", "").expect("valid");
        assert_eq!((limits.max_turns, limits.daily_cap_usd, limits.max_tokens), (Some(7), None, None));
        let limits = AgentLimits::parse(0.5, "", "", " 2048 ").expect("valid");
        assert_eq!(limits.max_tokens, Some(2048));
    }
}
