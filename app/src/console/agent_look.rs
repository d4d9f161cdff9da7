//! The agent form's fieldset "The widget": language, greeting, placeholder, starter questions and
//! the look (colours, scheme, launcher, size), with the contrast warning and the live preview.

use leptos::prelude::*;
use parley_widget::colors;

use super::fields::{Bound, Errors, SelectField, TextArea, TextInput, bind};
use super::look_preview::LookPreview;
use super::types::AgentForm;

const POSITIONS: &[(&str, &str)] = &[("right", "Bottom right"), ("left", "Bottom left")];

const SCHEMES: &[(&str, &str)] =
    &[("light", "Light"), ("dark", "Dark"), ("auto", "As the visitor's system (prefers-color-scheme)")];

const ASK: &[(&str, &str)] = &[("off", "Not asked"), ("optional", "Optional"), ("required", "Required")];

const ICONS: &[(&str, &str)] =
    &[("chat", "Speech bubble"), ("help", "Question mark"), ("sparkle", "Sparkle"), ("none", "None (label only)")];

const LANGUAGES: &[(&str, &str)] = &[
    ("auto", "The visitor's browser language"),
    ("en", "English"),
    ("zh-Hans", "简体中文 (Simplified Chinese)"),
    ("zh-Hant", "繁體中文 (Traditional Chinese)"),
    ("ja", "日本語 (Japanese)"),
    ("ko", "한국어 (Korean)"),
    ("es", "Español (Spanish)"),
    ("fr", "Français (French)"),
    ("de", "Deutsch (German)"),
    ("pt-BR", "Português do Brasil (Brazilian Portuguese)"),
    ("ar", "العربية (Arabic)"),
    ("vi", "Tiếng Việt (Vietnamese)"),
    ("th", "ไทย (Thai)"),
    ("id", "Bahasa Indonesia (Indonesian)"),
];

/// The fieldset. `starters` is the starter questions' text area (one per line).
#[component]
pub fn LookFields(f: RwSignal<AgentForm>, starters: RwSignal<String>, errors: Errors) -> impl IntoView {
    view! {
    <fieldset>
        <legend>"The widget"</legend>
        <SelectField id="a-language" label="Language of the widget" field="language" value=bind!(f.language)
            errors options=LANGUAGES />
        <TextInput id="a-greeting" label="Greeting" field="greeting" value=bind!(f.greeting) errors />
        <TextInput id="a-placeholder" label="Input placeholder (empty: “Type a message…” in the visitor's language)"
            field="placeholder" value=bind!(f.placeholder) errors />
        <TextArea id="a-starters" label="Starter questions, shown before the first message (one per line, up to four)"
            field="starters" value=Bound::new(move || starters.get(), move |v| starters.set(v)) errors rows="4" />
        <TextInput id="a-color" label="Theme colour" field="theme_color" value=bind!(f.theme_color) errors
            kind="color" />
        <TextInput id="a-text-color" label="Text on the theme colour (empty: black or white, whichever reads best)"
            field="text_color" value=bind!(f.text_color) errors placeholder="automatic" />
        {move || f.with(|f| colors::text_warning(&f.theme_color, f.text_color.trim())).map(|w| view! {
            <p class="c-warn" id="a-contrast-warning" role="status">{w}</p>
        })}
        <SelectField id="a-scheme" label="Colour scheme" field="color_scheme" value=bind!(f.color_scheme) errors
            options=SCHEMES />
        <SelectField id="a-position" label="Launcher position" field="launcher_position"
            value=bind!(f.launcher_position) errors options=POSITIONS />
        <SelectField id="a-icon" label="Launcher icon" field="launcher_icon" value=bind!(f.launcher_icon) errors
            options=ICONS />
        <TextInput id="a-launcher-label" label="Launcher label beside the icon (optional, up to 24 characters)"
            field="launcher_label" value=bind!(f.launcher_label) errors />
        <TextInput id="a-width" label="Panel width (320 to 480 px)" field="panel_width" value=bind!(f.panel_width)
            errors kind="number" inputmode="numeric" />
        <TextInput id="a-height" label="Panel height (400 to 800 px)" field="panel_height"
            value=bind!(f.panel_height) errors kind="number" inputmode="numeric" />
        {view! { <LookPreview f starters /> }.into_any()}
    </fieldset>
    <fieldset>
        <legend>"Pre-chat form"</legend>
        <p class="c-hint">"Asked before the first message when it asks for anything; the model reads the answers, and an email address given here is where replies go once the visitor has left."</p>
        <TextInput id="a-prechat-title" label="Pre-chat form: title" field="prechat_title" value=bind!(f.prechat_title) errors
            placeholder="e.g. Before we start" />
        <SelectField id="a-prechat-name" label="Pre-chat form: name" field="prechat_name" value=bind!(f.prechat_name) errors options=ASK />
        <SelectField id="a-prechat-email" label="Pre-chat form: email" field="prechat_email" value=bind!(f.prechat_email) errors options=ASK />
        <SelectField id="a-prechat-phone" label="Pre-chat form: phone" field="prechat_phone" value=bind!(f.prechat_phone) errors options=ASK />
    </fieldset>
    }
}
