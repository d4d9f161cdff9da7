//! `/admin/engage` (Agents → Engage): an agent's triggers — when a teaser bubble greets visitors
//! beside the launcher, or the panel opens by itself — with their showings and clicks, a form to
//! write one, and a preview of each on any address of the site.

use leptos::prelude::*;
use parley_widget::protocol::{
    ContextRule, HoursRule, LanguageSetting, Trigger, TriggerShow, TriggerWhen, UrlMatch, UrlRule, VisitorKind,
};

use super::api::engage::{engage_rules, preview_trigger, remove_trigger, save_trigger};
use super::error::ConsoleError;
use super::fields::{
    CheckGroup, CheckItem, CheckList, Checkbox, ErrorLine, Errors, SelectField, TextArea, TextInput, bind, tick,
};
use super::lists::AgentChoice;
use super::types::{EngageView, FieldError, TriggerItem, TriggerPreview};

/// `/admin/engage`: choose an agent, then its triggers.
#[component]
pub fn EngagePage() -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let version = RwSignal::new(0u64);
    let view_of = Resource::new(
        move || (agent.get(), version.get()),
        |(agent, _)| async move { if agent.is_empty() { Ok(None) } else { engage_rules(agent).await.map(Some) } },
    );
    view! {
        <h1>"Engage"</h1>
        <p class="c-hint">
            "Triggers start the conversation: a teaser beside the launcher (a message and up to three buttons, each opening the chat and sending its text) or the chat opened with a greeting. The widget's loader decides in the visitor's browser; a page whose agent has no trigger loads nothing more for them. A visitor sees a trigger at most once a page and once every few days you choose, and no teaser again in a browser session after closing one."
        </p>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <AgentChoice id="e-agent" agent />
        </form>
        <Suspense fallback=|| view! { <p class="c-hint">"Loading…"</p> }>
            {move || view_of.get().map(|r| match r {
                Ok(Some(v)) => view! { <Triggers v version /> }.into_any(),
                Ok(None) => view! { <p class="c-hint">"Choose an agent."</p> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </Suspense>
    }
}

#[component]
fn Triggers(v: EngageView, version: RwSignal<u64>) -> impl IntoView {
    let agent_id = StoredValue::new(v.agent_id.clone());
    // The trigger being edited (`Some(None)`: a new one).
    let editing = RwSignal::new(None::<Option<TriggerItem>>);
    let previewing = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let rows = v.rules.clone();
    view! {
        <section class="c-card" id="triggers">
            <h2>"Triggers"</h2>
            {if rows.is_empty() {
                view! { <p class="c-hint">"No trigger yet: visitors are greeted only when they open the chat."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table">
                        <thead><tr>
                            <th scope="col">"Name"</th><th scope="col">"When"</th><th scope="col">"Shows"</th>
                            <th scope="col">"State"</th><th scope="col">"Shown (30 days)"</th><th scope="col">"Clicked"</th>
                            <th scope="col"><span class="c-sr">"Actions"</span></th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|item| {
                                let name = item.trigger.name.clone();
                                let for_edit = item.clone();
                                let for_remove = name.clone();
                                let for_preview = name.clone();
                                let remove = move |_| {
                                    let name = for_remove.clone();
                                    if !super::layout::confirm(&format!("Remove the trigger {name}?")) {
                                        return;
                                    }
                                    leptos::task::spawn_local(async move {
                                        match remove_trigger(agent_id.get_value(), name).await {
                                            Ok(()) => version.update(|v| *v += 1),
                                            Err(e) => error.set(Some(e.to_string())),
                                        }
                                    });
                                };
                                view! {
                                    <tr data-trigger=name.clone()>
                                        <td><code>{name.clone()}</code></td>
                                        <td>{when_text(&item.trigger.when)}</td>
                                        <td>{show_text(&item.trigger.show)}</td>
                                        <td>{if item.enabled { "On" } else { "Off" }}</td>
                                        <td>{item.shown}</td>
                                        <td>{item.clicked}</td>
                                        <td class="c-actions">
                                            <button type="button" on:click=move |_| editing.set(Some(Some(for_edit.clone())))>
                                                "Edit"<span class="c-sr">{format!(" {name}")}</span>
                                            </button>
                                            <button type="button" on:click=move |_| previewing.set(Some(for_preview.clone()))>
                                                "Preview"<span class="c-sr">{format!(" {name}")}</span>
                                            </button>
                                            <button type="button" class="c-danger" on:click=remove>
                                                "Remove"<span class="c-sr">{format!(" {name}")}</span>
                                            </button>
                                        </td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
            <ErrorLine error />
            <p><button type="button" id="trigger-new" on:click=move |_| editing.set(Some(None))>"New trigger"</button></p>
        </section>
        {move || previewing.get().map(|name| view! { <Preview agent_id=agent_id.get_value() name /> })}
        {move || editing.get().map(|item| view! { <TriggerEditor agent_id=agent_id.get_value() item version editing /> })}
    }
}

/// What a rule waits for, in a line.
fn when_text(w: &TriggerWhen) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &w.url {
        let how = match u.kind {
            UrlMatch::Is => "page is",
            UrlMatch::StartsWith => "page starts with",
            UrlMatch::Matches => "page matches",
        };
        parts.push(format!("{how} {}", u.value));
    }
    if w.seconds > 0 {
        parts.push(format!("after {} s", w.seconds));
    }
    if w.scroll > 0 {
        parts.push(format!("scrolled {} %", w.scroll));
    }
    if w.exit_intent {
        parts.push("leaving".into());
    }
    if let Some(v) = w.visitor {
        parts.push(if v == VisitorKind::New { "new visitors".into() } else { "returning visitors".into() });
    }
    for c in &w.context {
        parts.push(format!("{} = {}", c.key, c.value));
    }
    if let Some(h) = w.hours {
        parts.push(if h == HoursRule::Open { "while open".into() } else { "while closed".into() });
    }
    if !w.languages.is_empty() {
        parts.push(w.languages.join(", "));
    }
    if w.manual {
        parts.push("Parley.trigger only".into());
    }
    if parts.is_empty() { "Every page, at once".into() } else { parts.join(" · ") }
}

fn show_text(s: &TriggerShow) -> String {
    match s {
        TriggerShow::Teaser { message, buttons } if buttons.is_empty() => format!("Teaser: {message}"),
        TriggerShow::Teaser { message, buttons } => format!("Teaser: {message} [{}]", buttons.join("] [")),
        TriggerShow::Open { greeting } => format!("Opens with: {greeting}"),
    }
}

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
            url_kind: w.url.as_ref().map_or("", |u| kind_name(u.kind)).into(),
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

fn kind_name(k: UrlMatch) -> &'static str {
    match k {
        UrlMatch::Is => "is",
        UrlMatch::StartsWith => "starts_with",
        UrlMatch::Matches => "matches",
    }
}

const URL_KINDS: &[(&str, &str)] =
    &[("", "Any page"), ("is", "is"), ("starts_with", "starts with"), ("matches", "matches the pattern")];
const VISITORS: &[(&str, &str)] = &[("", "Anyone"), ("new", "New visitors"), ("returning", "Returning visitors")];
const HOURS: &[(&str, &str)] = &[("", "Any time"), ("open", "While open (business hours)"), ("closed", "While closed")];
const KINDS: &[(&str, &str)] = &[("teaser", "A teaser beside the launcher"), ("open", "Open the chat with a greeting")];

#[component]
fn TriggerEditor(
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

/// Whether a trigger would show on an address, and a link that shows it there.
#[component]
fn Preview(agent_id: String, name: String) -> impl IntoView {
    let agent_id = StoredValue::new(agent_id);
    let name = StoredValue::new(name);
    let address = RwSignal::new(String::new());
    let result = RwSignal::new(None::<TriggerPreview>);
    let error = RwSignal::new(None::<String>);
    let check = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            match preview_trigger(agent_id.get_value(), name.get_value(), address.get_untracked()).await {
                Ok(p) => {
                    error.set(None);
                    result.set(Some(p));
                }
                Err(e) => {
                    result.set(None);
                    error.set(Some(e.to_string()));
                }
            }
        });
    };
    view! {
        <form class="c-card c-form" id="trigger-preview" on:submit=check aria-label="Preview">
            <h2>{format!("Preview {}", name.get_value())}</h2>
            <label for="p-address">"An address of your site"</label>
            <input id="p-address" type="url" placeholder="https://example.com/pricing" prop:value=address
                on:input=move |ev| address.set(event_target_value(&ev)) />
            <button type="submit">"Check"</button>
            <ErrorLine error />
            {move || result.get().map(|p| view! {
                <p role="status" id="preview-verdict" class=if p.passes { "c-ok" } else { "c-warn" }>
                    {if p.passes { "It can show on this page." } else { "It does not show on this page." }}
                </p>
                <ul>{p.notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                {match p.link {
                    Some(link) => view! {
                        <p><a href=link.clone() target="_blank" rel="noopener" id="preview-link">"Open the page with it shown"</a>
                        " (shows it at once, whatever its conditions; nothing is counted)"</p>
                    }.into_any(),
                    None => view! { <p class="c-hint">"Turn the trigger on to see it on the page."</p> }.into_any(),
                }}
            })}
        </form>
    }
}
