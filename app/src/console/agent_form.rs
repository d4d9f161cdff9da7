//! The agent form: who the agent is, what it may do, the model it talks to, its look, and its
//! guards. The server checks every field and names the wrong ones.

use std::collections::BTreeSet;

use leptos::prelude::*;

use super::agent_look::LookFields;
use super::api::agents::save_agent;
use super::fields::{
    Bound, CheckGroup, CheckItem, CheckList, Checkbox, Errors, FieldMessage, FormStatus, Notice, SelectField, TextArea,
    TextInput, bind, tick,
};
use super::layout::go_to;
use super::types::{AgentForm, ToolInfo, UnpricedPrice};

const PROVIDERS: &[(&str, &str)] = &[
    ("demo", "Offline demo model (no API key)"),
    ("openai", "OpenAI-compatible API"),
    ("anthropic", "Anthropic Messages API"),
];

/// The form of a new agent (`form.id` is `None`) or of a stored one, with the catalogue's tools.
#[component]
pub fn AgentFormView(
    form: AgentForm,
    tools: Vec<ToolInfo>,
    unpriced: UnpricedPrice,
    /// The stored model has a price row.
    model_priced: bool,
) -> impl IntoView {
    let is_new = form.id.is_none();
    let price_warning = (!model_priced).then(|| unpriced.warning(&form.model));
    let cap_label = match unpriced.default_daily_cap_usd {
        Some(cap) => format!("Daily spend cap of this agent (US$, empty: the server's default, US${cap})"),
        None => "Daily spend cap of this agent (US$, empty: none)".to_owned(),
    };
    let title = if is_new { "New agent".to_owned() } else { format!("Agent: {}", form.name) };
    let hint = form.api_key_hint.clone();
    let origins = RwSignal::new(form.allowed_origins.join("\n"));
    let starters = RwSignal::new(form.starters.join("\n"));
    let limit_tools = RwSignal::new(form.enabled_tools.is_some());
    let f = RwSignal::new(form);
    let status = FormStatus::default();
    let errors = status.errors;

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let mut form = f.get_untracked();
        form.allowed_origins =
            origins.get_untracked().lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
        form.starters =
            starters.get_untracked().lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
        if !limit_tools.get_untracked() {
            form.enabled_tools = None;
        }
        status.notice.set(None);
        leptos::task::spawn_local(async move {
            match status.settle(save_agent(form).await) {
                Some(id) if is_new && !id.is_empty() => go_to(&format!("/admin/agents/{id}")),
                Some(_) => {
                    status.notice.set(Some("Saved.".into()));
                    f.update(|f| f.new_api_key.clear());
                }
                None => {}
            }
        });
    };
    let placeholder = hint.map(|h| format!("stored: {h} — leave empty to keep")).unwrap_or_else(|| "not set".into());

    view! {
        <h1>{title}</h1>
        <form class="c-form c-card" on:submit=submit novalidate=true>
            <TextInput id="a-name" label="Name" field="name" value=bind!(f.name) errors />
            <TextInput id="a-key" label="Public key (in the embed snippet)" field="key" value=bind!(f.key) errors />
            <TextInput id="a-vertical" label="Vertical" field="vertical" value=bind!(f.vertical) errors />
            <CapabilityFields f tools limit_tools errors />
            <SelectField id="a-provider" label="Provider" field="provider" value=bind!(f.provider) errors options=PROVIDERS />
            <TextInput id="a-base-url" label="API base URL (e.g. https://api.openai.com/v1)" field="base_url"
                value=bind!(f.base_url) errors />
            <TextInput id="a-api-key" label="API key" field="new_api_key" value=bind!(f.new_api_key) errors
                kind="password" autocomplete="off" placeholder />
            <TextInput id="a-model" label="Model" field="model" value=bind!(f.model) errors />
            {price_warning.map(|w| view! { <p class="c-warn" id="a-price-warning" role="status">{w}</p> })}
            <TextInput id="a-fallback" label="Fallback model (optional)" field="fallback_model"
                value=bind!(f.fallback_model) errors />
            <TextArea id="a-prompt" label="System prompt" field="system_prompt" value=bind!(f.system_prompt) errors
                rows="8" />
            // Type-erased: the form's view type is otherwise too deep for the compiler.
            {view! { <DomainFields f errors /> }.into_any()}
            {view! { <LookFields f starters errors /> }.into_any()}
            <TextArea id="a-origins" label="Allowed origins (one per line; none: no website can embed it yet; * for any)" field="allowed_origins"
                value=Bound::new(move || origins.get(), move |v| origins.set(v)) errors rows="3" />
            {view! { <GuardFields f cap_label errors /> }.into_any()}
            <Notice status />
            <button type="submit" class="c-primary">"Save"</button>
        </form>
    }
}

/// The capabilities, and the tools they allow (all, or the ones ticked).
#[component]
pub(super) fn CapabilityFields(
    f: RwSignal<AgentForm>,
    tools: Vec<ToolInfo>,
    limit_tools: RwSignal<bool>,
    errors: Errors,
) -> impl IntoView {
    let capabilities: Vec<CheckItem> =
        tools.iter().map(|t| t.capability.clone()).collect::<BTreeSet<_>>().into_iter().map(CheckItem::named).collect();
    let tools = StoredValue::new(tools);
    let tool_items = move || {
        tools.with_value(|tools| {
            let allowed = |t: &&ToolInfo| f.with(|f| f.capabilities.contains(&t.capability));
            tools.iter().filter(allowed).map(|t| CheckItem::named(t.name.clone())).collect::<Vec<_>>()
        })
    };
    view! {
            <CheckGroup legend="Capabilities" field="capabilities" errors>
                <CheckList prefix="cap-" items=capabilities
                    chosen=Signal::derive(move || f.with(|f| f.capabilities.clone()))
                    toggle=Callback::new(move |(cap, on): (String, bool)| f.update(|f| tick(&mut f.capabilities, &cap, on))) />
            </CheckGroup>
            <CheckGroup legend="Tools" field="enabled_tools" errors>
                <Checkbox id="limit-tools" checked=limit_tools
                    on_change=Callback::new(move |on| {
                        limit_tools.set(on);
                        if on && f.with_untracked(|f| f.enabled_tools.is_none()) {
                            f.update(|f| f.enabled_tools = Some(vec![]));
                        }
                    })>
                    "Only some of the tools the capabilities allow"
                </Checkbox>
                <Show when=move || limit_tools.get()>
                    {move || view! {
                        <CheckList prefix="tool-" items=tool_items() code=true
                            chosen=Signal::derive(move || f.with(|f| f.enabled_tools.clone().unwrap_or_default()))
                            toggle=Callback::new(move |(tool, on): (String, bool)| {
                                f.update(|f| tick(f.enabled_tools.get_or_insert_with(Vec::new), &tool, on))
                            }) />
                    }}
                </Show>
            </CheckGroup>
    }
}

/// What a conversation and a day may cost, and how long a turn may run.
#[component]
fn GuardFields(f: RwSignal<AgentForm>, cap_label: String, errors: Errors) -> impl IntoView {
    view! {
            <div class="c-field">
                <label for="a-budget">"Budget per conversation (US$)"</label>
                <input id="a-budget" type="number" step="0.01" min="0.01"
                    prop:value=move || f.with(|f| f.budget_usd.to_string())
                    on:input=move |ev| f.update(|f| f.budget_usd = event_target_value(&ev).parse().unwrap_or(f64::NAN)) />
                <FieldMessage errors field="budget_usd" />
            </div>
            <TextInput id="a-max-turns" label="Tool hops per turn (empty: 3, or 15 with expert_team)" field="max_turns"
                value=bind!(f.max_turns) errors />
            <TextInput id="a-daily-cap" label=cap_label field="daily_cap_usd"
                value=bind!(f.daily_cap_usd) errors />
            <TextInput id="a-max-tokens" label="Longest reply, in tokens (max_tokens; empty: the server's default, 4096)"
                field="max_tokens" value=bind!(f.max_tokens) errors />
    }
}

/// What the agent offers: its services with the prices its payment tool charges (the categories
/// its assessment, memory and news tools take), its official sites, its reference news.
#[component]
fn DomainFields(f: RwSignal<AgentForm>, errors: Errors) -> impl IntoView {
    view! {
    <fieldset>
        <legend>"What the agent offers"</legend>
        <TextArea id="a-services" field="services" value=bind!(f.services) errors rows="6"
            label="Services, one per line: CODE | what it is called | price | currency | words that mention it \
                (price, currency and words optional; only a service with a price can be paid for, at that price)" />
        <TextArea id="a-sites" field="sites" value=bind!(f.sites) errors rows="3"
            label="Official sites, one per line: Title | https://… (offered when web search is unavailable, \
                and as the sources of the reference news)" />
        <TextArea id="a-reference-news" field="reference_news" value=bind!(f.reference_news) errors rows="4"
            label="Reference news, one per line: CODE (or ALL) | Title | Summary (given when no news is stored)" />
    </fieldset>
    }
}
