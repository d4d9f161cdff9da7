//! The agent form's live preview of the widget's look: the panel's header, greeting, starter
//! questions and input, and the launcher, drawn with the panel's own classes and colour rules
//! (`parley_widget::colors`) from the form as it is being typed — before anything is saved.

use leptos::prelude::*;
use parley_widget::colors;
use parley_widget::i18n;
use parley_widget::protocol::LanguageSetting;

use super::types::AgentForm;

/// The launcher's picture, as the loader draws it (`widget/src/loader/widget.js`).
fn icon_path(icon: &str) -> Option<&'static str> {
    match icon {
        "none" => None,
        "help" => Some(
            "M12 2.5a9.5 9.5 0 1 0 0 19 9.5 9.5 0 0 0 0-19zm0 15.9a1.2 1.2 0 1 1 0-2.4 1.2 1.2 0 0 1 0 2.4zm1.3-5.5c-.5.3-.3.7-.3 1.3h-2c0-1.5.4-2.2 1.4-2.8.8-.4 1.4-.8 1.4-1.6a1.8 1.8 0 0 0-3.6.1h-2a3.8 3.8 0 1 1 5.1 3z",
        ),
        "sparkle" => Some(
            "M12 2.5l2.2 6.1 6.3 2.4-6.3 2.4L12 19.5l-2.2-6.1L3.5 11l6.3-2.4zM19 16l.9 2.1 2.1.9-2.1.9L19 22l-.9-2.1-2.1-.9 2.1-.9z",
        ),
        _ => Some(
            "M4 5.5A2.5 2.5 0 0 1 6.5 3h11A2.5 2.5 0 0 1 20 5.5v8a2.5 2.5 0 0 1-2.5 2.5H10l-4.5 4v-4h0A2.5 2.5 0 0 1 4 13.5z",
        ),
    }
}

/// The preview. `starters` is the starter questions' text area (one per line).
#[component]
pub fn LookPreview(f: RwSignal<AgentForm>, starters: RwSignal<String>) -> impl IntoView {
    let style = move || {
        f.with(|f| {
            let text = Some(f.text_color.trim()).filter(|t| !t.is_empty());
            colors::style(&f.theme_color, text)
        })
    };
    let class = move || f.with(|f| format!("pw-panel pw-scheme-{} c-look-panel", f.color_scheme));
    // The panel's words in the agent's language (English for `auto`: the visitor decides).
    let labels = move || {
        let setting = f.with(|f| LanguageSetting::parse(&f.language).unwrap_or_default());
        i18n::choose(setting, &[]).labels()
    };
    let placeholder = move || {
        f.with(|f| match f.placeholder.trim() {
            "" => labels().placeholder.to_owned(),
            own => own.to_owned(),
        })
    };
    let chips = move || {
        starters
            .with(|s| s.lines().map(str::trim).filter(|l| !l.is_empty()).take(4).map(str::to_owned).collect::<Vec<_>>())
    };
    let side = move || f.with(|f| if f.launcher_position == "left" { "c-look-left" } else { "c-look-right" });
    let launcher = move || {
        f.with(|f| {
            let path = icon_path(&f.launcher_icon);
            let label = f.launcher_label.trim().to_owned();
            view! {
                {path.map(|d| view! {
                    <svg viewBox="0 0 24 24" width="26" height="26" aria-hidden="true"><path d=d fill="currentColor"></path></svg>
                })}
                {(!label.is_empty()).then(|| view! { <span>{label}</span> })}
            }
        })
    };
    let size = move || f.with(|f| format!("{} × {} px", f.panel_width.trim(), f.panel_height.trim()));
    view! {
        <section class="c-look" aria-labelledby="look-preview-title">
            <h2 id="look-preview-title">"Preview"</h2>
            <p class="c-hint">{move || format!("Panel {}; phones get the whole screen.", size())}</p>
            <div class=move || format!("c-look-stage {}", side())>
                <div class=class style=style>
                    <div class="pw-header">
                        <div class="pw-title"><strong>{move || f.with(|f| f.name.clone())}</strong></div>
                    </div>
                    <div class="pw-list c-look-list">
                        <div class="pw-msg pw-assistant">
                            <div class="pw-bubble">{move || f.with(|f| f.greeting.clone())}</div>
                        </div>
                    </div>
                    <div class="pw-starters">
                        {move || chips().into_iter().map(|q| view! { <span class="pw-starter">{q}</span> }).collect_view()}
                    </div>
                    <div class="pw-composer">
                        <span class="pw-input c-look-input">{placeholder}</span>
                        <span class="pw-send c-look-send">{move || labels().send}</span>
                    </div>
                </div>
                <span class="c-look-launcher" style=style>{launcher}</span>
            </div>
        </section>
    }
}
