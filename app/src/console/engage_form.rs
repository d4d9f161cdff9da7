//! The form of one trigger on `/admin/engage`: its fields as text (`Draft`), read back into the
//! protocol's `Trigger` (numbers and `key=value` lines checked here, everything else by the
//! server, which names the field at fault).

use leptos::prelude::*;
use parley_widget::protocol::{
    ContextRule, HoursRule, LanguageSetting, Trigger, TriggerShow, TriggerWhen, UrlMatch, UrlRule, VisitorKind,
};

use super::api::engage::save_trigger;
use super::error::ConsoleError;
use super::fields::{CheckGroup, CheckItem, CheckList, Checkbox, Errors, SelectField, TextArea, TextInput, bind, tick};
use super::types::{FieldError, TriggerItem};

/// The form's text fields.
#[derive(Clone, Default)]
struct Draft {
    name: String,
    url_kind: String,
    url: String,
    seconds: String,
    scroll: String,
    visitor: String,
    context: String,
    hours: String,
    kind: String,
    message: String,
    button1: String,
    button2: String,
    button3: String,
    greeting: String,
    every_days: String,
}

impl Draft {
    fn of(t: Option<&Trigger>) -> Draft {
        let Some(t) = t else {
            return Draft { kind: "teaser".into(), every_days: "1".into(), ..Draft::default() };
        };
        let w = &t.when;
        let number = |n: u32| if n == 0 { String::new() } else { n.to_string() };
        let mut d = Draft {
            name: t.name.clone(),
            url_kind: w.url.as_ref().map_or("", |u| u.kind.as_str()).into(),
            url: w.url.as_ref().map(|u| u.value.clone()).unwrap_or_default(),
            seconds: number(w.seconds),
            scroll: number(u32::from(w.scroll)),
            visitor: match w.visitor {
                None => "",
                Some(VisitorKind::New) => "new",
                Some(VisitorKind::Returning) => "returning",
            }
            .into(),
            context: w.context.iter().map(|c| format!("{}={}", c.key, c.value)).collect::<Vec<_>>().join("\n"),
            hours: match w.hours {
                None => "",
                Some(HoursRule::Open) => "open",
                Some(HoursRule::Closed) => "closed",
            }
            .into(),
            every_days: t.every_days.to_string(),
            ..Draft::default()
        };
        match &t.show {
            TriggerShow::Teaser { message, buttons } => {
                d.kind = "teaser".into();
                d.message = message.clone();
                let b = |i: usize| buttons.get(i).cloned().unwrap_or_default();
                (d.button1, d.button2, d.button3) = (b(0), b(1), b(2));
            }
            TriggerShow::Open { greeting } => {
                d.kind = "open".into();
                d.greeting = greeting.clone();
            }
        }
        d
    }

    /// The rule, or the fields that are not numbers.
    fn rule(&self, exit_intent: bool, manual: bool, languages: Vec<String>) -> Result<Trigger, Vec<FieldError>> {
        let mut wrong = Vec::new();
        let mut number = |field: &'static str, text: &str, max: u32| -> u32 {
            let text = text.trim();
            if text.is_empty() {
                return 0;
            }
            match text.parse::<u32>() {
                Ok(n) if n <= max => n,
                _ => {
                    wrong.push(FieldError::new(field, format!("a whole number from 0 to {max}")));
                    0
                }
            }
        };
        let seconds = number("seconds", &self.seconds, 3600);
        let scroll = number("scroll", &self.scroll, 100) as u8;
        let every_days = number("every_days", &self.every_days, 365) as u16;
        let mut context = Vec::new();
        for line in self.context.lines().filter(|l| !l.trim().is_empty()) {
            match line.split_once('=') {
                Some((key, value)) => context.push(ContextRule { key: key.trim().into(), value: value.trim().into() }),
                None => wrong.push(FieldError::new("context", format!("write key=value, not “{}”", line.trim()))),
            }
        }
        if !wrong.is_empty() {
            return Err(wrong);
        }
        let url_kind = match self.url_kind.as_str() {
            "is" => Some(UrlMatch::Is),
            "starts_with" => Some(UrlMatch::StartsWith),
            "matches" => Some(UrlMatch::Matches),
            _ => None,
        };
        let show = if self.kind == "open" {
            TriggerShow::Open { greeting: self.greeting.clone() }
        } else {
            let buttons = [&self.button1, &self.button2, &self.button3]
                .into_iter()
                .filter(|b| !b.trim().is_empty())
                .cloned()
                .collect();
            TriggerShow::Teaser { message: self.message.clone(), buttons }
        };
        Ok(Trigger {
            name: self.name.clone(),
            when: TriggerWhen {
                url: url_kind.map(|kind| UrlRule { kind, value: self.url.clone() }),
                seconds,
                scroll,
                exit_intent,
                visitor: match self.visitor.as_str() {
                    "new" => Some(VisitorKind::New),
                    "returning" => Some(VisitorKind::Returning),
                    _ => None,
                },
                context,
                hours: match self.hours.as_str() {
                    "open" => Some(HoursRule::Open),
                    "closed" => Some(HoursRule::Closed),
                    _ => None,
                },
                languages,
                manual,
            },
            show,
            every_days,
        })
    }
}

const URL_KINDS: &[(&str, &str)] =
    &[("", "Any page"), ("is", "is"), ("starts_with", "starts with"), ("matches", "matches the pattern")];
const VISITORS: &[(&str, &str)] = &[("", "Anyone"), ("new", "New visitors"), ("returning", "Returning visitors")];
const HOURS: &[(&str, &str)] = &[("", "Any time"), ("open", "While open (business hours)"), ("closed", "While closed")];
const KINDS: &[(&str, &str)] = &[("teaser", "A teaser beside the launcher"), ("open", "Open the chat with a greeting")];

#[component]
pub fn TriggerEditor(
    agent_id: String,
    item: Option<TriggerItem>,
    version: RwSignal<u64>,
    editing: RwSignal<Option<Option<TriggerItem>>>,
) -> impl IntoView {
    let agent_id = StoredValue::new(agent_id);
    let previous = StoredValue::new(item.as_ref().map(|i| i.trigger.name.clone()).unwrap_or_default());
    let trigger = item.as_ref().map(|i| &i.trigger);
    let form = RwSignal::new(Draft::of(trigger));
    let enabled = RwSignal::new(item.as_ref().is_none_or(|i| i.enabled));
    let exit_intent = RwSignal::new(trigger.is_some_and(|t| t.when.exit_intent));
    let manual = RwSignal::new(trigger.is_some_and(|t| t.when.manual));
    let languages = RwSignal::new(trigger.map(|t| t.when.languages.clone()).unwrap_or_default());
    let errors: Errors = RwSignal::new(Vec::new());
    let notice = RwSignal::new(None::<String>);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let rule = form
            .with_untracked(|d| d.rule(exit_intent.get_untracked(), manual.get_untracked(), languages.get_untracked()));
        let rule = match rule {
            Ok(r) => r,
            Err(wrong) => {
                errors.set(wrong);
                notice.set(Some("Please correct the fields marked below.".into()));
                return;
            }
        };
        let json = serde_json::to_string(&rule).unwrap_or_default();
        leptos::task::spawn_local(async move {
            match save_trigger(agent_id.get_value(), previous.get_value(), enabled.get_untracked(), json).await {
                Ok(()) => {
                    errors.set(Vec::new());
                    editing.set(None);
                    version.update(|v| *v += 1);
                }
                Err(ConsoleError::Invalid(fields)) => {
                    errors.set(fields);
                    notice.set(Some("Please correct the fields marked below.".into()));
                }
                Err(e) => notice.set(Some(e.to_string())),
            }
        });
    };
    let teaser = move || form.with(|d| d.kind != "open");
    let title = if item.is_some() { "Edit the trigger" } else { "New trigger" };
    view! {
        <form class="c-card c-form" id="trigger-form" on:submit=save aria-label=title>
            <h2>{title}</h2>
            <TextInput id="t-name" label="Name (a-z, 0-9, - and _; Parley.trigger calls it by this)" field="name" value=bind!(form.name) errors />
            <Checkbox id="t-enabled" checked=enabled on_change=Callback::new(move |on| enabled.set(on))>"On"</Checkbox>
            <fieldset class="c-field">
                <legend>"When"</legend>
                <SelectField id="t-url-kind" label="The page's address" field="url_kind" value=bind!(form.url_kind) errors options=URL_KINDS />
                <TextInput id="t-url" label="Address, path (/pricing) or pattern" field="url" value=bind!(form.url) errors />
                <TextInput id="t-seconds" label="Seconds on the page" field="seconds" value=bind!(form.seconds) errors inputmode="numeric" />
                <TextInput id="t-scroll" label="Scrolled down (percent of the page)" field="scroll" value=bind!(form.scroll) errors inputmode="numeric" />
                <Checkbox id="t-exit" checked=exit_intent on_change=Callback::new(move |on| exit_intent.set(on))>"About to leave (pointer towards the tabs; desktop)"</Checkbox>
                <SelectField id="t-visitor" label="Visitor" field="visitor" value=bind!(form.visitor) errors options=VISITORS />
                <TextArea id="t-context" label="Page context (Parley.setContext), one key=value a line" field="context" value=bind!(form.context) errors rows="2" spellcheck="false" />
                <SelectField id="t-hours" label="Business hours" field="hours" value=bind!(form.hours) errors options=HOURS />
                <CheckGroup legend="Browser language (none ticked: any)" field="languages" errors>
                    <CheckList prefix="t-lang-" chosen=languages
                        items=LanguageSetting::ALL.iter().filter(|l| **l != LanguageSetting::Auto)
                            .map(|l| CheckItem::named(l.as_str().to_owned())).collect()
                        toggle=Callback::new(move |(name, on): (String, bool)| languages.update(|c| tick(c, &name, on))) />
                </CheckGroup>
                <Checkbox id="t-manual" checked=manual on_change=Callback::new(move |on| manual.set(on))>"Only when the page calls Parley.trigger(name)"</Checkbox>
            </fieldset>
            <fieldset class="c-field">
                <legend>"Show"</legend>
                <SelectField id="t-kind" label="What" field="kind" value=bind!(form.kind) errors options=KINDS />
                <Show when=teaser fallback=move || view! {
                    <TextArea id="t-greeting" label="Greeting" field="greeting" value=bind!(form.greeting) errors rows="2" />
                }>
                    <TextArea id="t-message" label="Message" field="message" value=bind!(form.message) errors rows="2" />
                    <TextInput id="t-button1" label="Button 1 (sent as the visitor's message)" field="buttons" value=bind!(form.button1) errors />
                    <TextInput id="t-button2" label="Button 2" field="buttons2" value=bind!(form.button2) errors />
                    <TextInput id="t-button3" label="Button 3" field="buttons3" value=bind!(form.button3) errors />
                </Show>
                <TextInput id="t-days" label="At most once per visitor every … days" field="every_days" value=bind!(form.every_days) errors inputmode="numeric" />
            </fieldset>
            <FieldErrorsOf errors fields=&["rule"] />
            {move || notice.get().map(|n| view! { <p class="c-notice" role="status">{n}</p> })}
            <button type="submit" class="c-primary">"Save trigger"</button>
            " "
            <button type="button" on:click=move |_| editing.set(None)>"Cancel"</button>
        </form>
    }
}

/// Messages of fields that have no input of their own.
#[component]
fn FieldErrorsOf(errors: Errors, fields: &'static [&'static str]) -> impl IntoView {
    move || {
        errors.with(|all| {
            all.iter()
                .filter(|e| fields.contains(&e.field.as_str()))
                .map(|e| view! { <p class="c-error" role="alert">{e.message.clone()}</p> })
                .collect_view()
        })
    }
}
