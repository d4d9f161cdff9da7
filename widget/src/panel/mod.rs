//! The chat panel shown inside the widget's iframe: header, messages with their blocks, the lead
//! form and the composer. Rendered in the browser by the embed page's own bundle (`parley-embed`)
//! from the agent's public configuration.

mod actions;
mod attach;
pub mod client;
pub mod colors;
mod host;
mod lead_form;
mod message;
pub mod model;
mod rating;
mod storage;

use leptos::html;
use leptos::prelude::*;

use crate::blocks::BlockCtx;
use crate::protocol::PublicAgentConfig;
use attach::{AttachButton, PendingImages};
use lead_form::LeadFormView;
use message::MessageView;
use model::Panel;
use rating::{EmailTranscript, RateConversation};

/// Keeps the newest message in view when the visitor is already near the bottom.
pub fn scroll_to_bottom() {
    request_animation_frame(|| {
        let Some(list) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id("pw-list"))
        else {
            return;
        };
        if list.scroll_height() - list.scroll_top() - list.client_height() < 160 {
            list.set_scroll_top(list.scroll_height());
        }
    });
}

/// The line shown outside business hours: when people are back, in the visitor's own time and
/// language.
fn away_text(labels: &crate::i18n::Labels, locale: &str, back: Option<i64>) -> String {
    let Some(ms) = back else { return labels.away_now.to_owned() };
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    let options = js_sys::Object::new();
    for (k, v) in
        [("weekday", "long"), ("day", "numeric"), ("month", "short"), ("hour", "2-digit"), ("minute", "2-digit")]
    {
        let _ = js_sys::Reflect::set(&options, &k.into(), &v.into());
    }
    let when = date.to_locale_string(locale, &options).as_string().unwrap_or_default();
    format!("{} {when}", labels.away_back)
}

/// The chat panel.
#[component]
pub fn ChatPanel(config: PublicAgentConfig, host_origin: Option<String>) -> impl IntoView {
    let panel = Panel::new(&config, host_origin);
    let labels = panel.labels;
    let input = RwSignal::new(String::new());
    let textarea = NodeRef::<html::Textarea>::new();
    let lang = panel.lang;
    let ctx = BlockCtx {
        capabilities: panel.capabilities,
        labels,
        lang,
        on_escalate: Callback::new(move |_| panel.lead_open.set(true)),
        lead_submitted: panel.lead_submitted,
        away: panel.away.with_value(Option::is_some),
    };
    let focus = move || {
        if let Some(t) = textarea.get_untracked() {
            let _ = t.focus();
        }
    };

    // Browser only: restore the conversation, then tell the host page we are ready.
    Effect::new(move |_| {
        panel.boot();
        host::listen(panel, focus);
        host::on_leave(panel);
        host::close_on_escape(panel);
        host::post(&panel, "parley:ready");
        // The page speaks the panel's language (screen readers, hyphenation, fonts).
        if let Some(root) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element()) {
            let _ = root.set_attribute("lang", lang.tag());
            let _ = root.set_attribute("dir", lang.dir());
        }
    });

    let submit = move || {
        let text = input.get_untracked();
        let nothing = text.trim().is_empty() && panel.pending.with_untracked(Vec::is_empty);
        if nothing || panel.busy.get_untracked() || panel.current.get_untracked().is_some() {
            return;
        }
        input.set(String::new());
        panel.send(text);
        scroll_to_bottom();
    };
    let max_chars = config.max_message_chars;
    let theme_style = colors::style(&config.theme.color, config.theme.text_color.as_deref());
    let scheme = format!("pw-panel pw-scheme-{}", config.theme.scheme.as_str());
    let placeholder = match config.placeholder.trim() {
        "" => labels.placeholder.to_owned(),
        own => own.to_owned(),
    };
    let starters: Vec<String> = config
        .starters
        .iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .take(crate::protocol::MAX_STARTERS)
        .collect();
    let has_starters = !starters.is_empty();
    // Sends a question for the visitor (a starter chip, "ask again"). The button clicked goes
    // away with its scope: the message it sends is made under the panel's own owner, or its
    // signals would be disposed with the button.
    let owner = Owner::current();
    let ask = Callback::new(move |text: String| {
        if panel.busy.get_untracked() || panel.current.get_untracked().is_some() {
            return;
        }
        match &owner {
            Some(owner) => owner.with(|| panel.send(text)),
            None => panel.send(text),
        }
        scroll_to_bottom();
    });
    let starters = StoredValue::new(starters);
    // Offered until the first message (only the greeting is shown).
    let show_starters = move || has_starters && panel.messages.with(|m| m.len() <= 1);

    view! {
        <div class=scheme style=theme_style lang=lang.tag() dir=lang.dir()>
            <header class="pw-header">
                <div class="pw-title">
                    <strong>{config.name.clone()}</strong>
                    {config.demo_model.then(|| view! {
                        <span class="pw-demo" title=labels.demo_hint>{labels.demo_badge}</span>
                    })}
                </div>
                <button type="button" class="pw-icon" title=labels.new_conversation aria-label=labels.new_conversation
                    on:click=move |_| panel.reset()>"↺"</button>
                <button type="button" class="pw-icon" title=labels.close aria-label=labels.close
                    on:click=move |_| host::post(&panel, "parley:close")>"✕"</button>
            </header>
            {panel.away.get_value().map(|back| view! {
                <p class="pw-notice pw-away" role="note">{away_text(labels, lang.tag(), back)}</p>
            })}
            // Not live: the announcer below reads each finished answer once, not every token.
            <div id="pw-list" class="pw-list" role="log" aria-live="off" aria-label=labels.conversation tabindex="0">
                <For each=move || panel.messages.get() key=|m| m.key let:msg>
                    <MessageView msg ctx panel ask />
                </For>
                <Show when=move || panel.lead_submitted.get() && panel.human.get().is_none()>
                    <p class="pw-notice pw-handoff">{labels.waiting_human}</p>
                </Show>
                <Show when=move || panel.operator_typing.get()>
                    <div class="pw-msg pw-operator pw-operator-typing">
                        <div class="pw-typing" aria-label=labels.operator_typing>
                            <span></span>
                            <span></span>
                            <span></span>
                        </div>
                    </div>
                </Show>
                <RateConversation panel />
                <EmailTranscript panel />
            </div>
            <Show when=show_starters>
                <div class="pw-starters" role="group" aria-label=labels.starters>
                    {starters.with_value(|list| list.iter().cloned().map(|q| {
                        let text = q.clone();
                        view! {
                            <button type="button" class="pw-starter" on:click=move |_| ask.run(text.clone())>{q}</button>
                        }
                    }).collect_view())}
                </div>
            </Show>
            <div class="pw-sr" role="status" aria-live="polite" aria-atomic="true">{move || panel.announce.get()}</div>
            <Show when=move || panel.lead_open.get()>
                <LeadFormView panel />
            </Show>
            {move || panel.notice.get().map(|n| view! { <p class="pw-notice" role="status">{n}</p> })}
            <Show when=move || panel.offline.get()>
                <p class="pw-notice pw-offline" role="status">{labels.offline}</p>
            </Show>
            <PendingImages panel />
            <form class="pw-composer" on:submit=move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                submit();
            }>
                {panel.accepts_images.then(|| view! { <AttachButton panel /> })}
                <textarea
                    node_ref=textarea
                    class="pw-input"
                    rows="1"
                    maxlength=max_chars
                    placeholder=placeholder.clone()
                    aria-label=placeholder
                    prop:value=input
                    on:input=move |ev| {
                        input.set(event_target_value(&ev));
                        panel.typed();
                    }
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                            ev.prevent_default();
                            submit();
                        }
                    }
                ></textarea>
                {move || if panel.current.get().is_some() {
                    view! {
                        <button type="button" class="pw-send pw-stop" on:click=move |_| panel.stop()>{labels.stop}</button>
                    }.into_any()
                } else {
                    view! {
                        <button type="submit" class="pw-send" disabled=move || panel.busy.get() || panel.current.get().is_some()>{labels.send}</button>
                    }.into_any()
                }}
            </form>
        </div>
    }
}
