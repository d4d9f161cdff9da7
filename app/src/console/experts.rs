//! `/admin/experts` (the list) and `/admin/experts/:name` (the form): the expert agents a
//! coordinator calls. They come with the product and are edited here, never created or renamed.
//! Administrators only.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::api::experts::{expert_editor, experts, save_expert};
use super::fields::{CheckGroup, CheckList, Checkbox, FormStatus, Notice, TextArea, TextInput, bind, tick};
use super::loaded::Loaded;
use super::types::{ExpertForm, ExpertItem, ToolInfo};

/// `/admin/experts`: every expert.
#[component]
pub fn ExpertsPage() -> impl IntoView {
    let list = Resource::new(|| (), |_| experts());
    view! {
        <h1>"Experts"</h1>
        <p class="c-hint">"Coordinator agents (capability "<code>"expert_team"</code>") call these experts as "<code>"invoke_<name>"</code>" tools."</p>
        <Loaded resource=list let:list>
            <table class="c-table" id="experts">
                <thead><tr><th>"Name"</th><th>"Enabled"</th><th>"Model"</th><th>"Max tokens"</th><th>"Tools"</th><th>"Description"</th></tr></thead>
                <tbody>{list.into_iter().map(|expert| view! { <ExpertRow expert /> }).collect_view()}</tbody>
            </table>
        </Loaded>
    }
}

#[component]
fn ExpertRow(expert: ExpertItem) -> impl IntoView {
    let e = expert;
    let href = format!("/admin/experts/{}", e.name);
    let tools = if e.tools.is_empty() { "none".to_owned() } else { e.tools.join(", ") };
    let title = e.description.clone();
    let key = e.name.clone();
    view! {
        <tr data-name=key>
            <td><A href=href>{e.name}</A></td>
            <td>{if e.enabled { "yes" } else { "no" }}</td>
            <td>{match e.model {
                Some(m) => view! { <code>{m}</code> }.into_any(),
                None => view! { <span class="c-hint">"coordinator's model"</span> }.into_any(),
            }}</td>
            <td>{e.max_tokens}</td>
            <td>{tools}</td>
            <td class="c-clip" title=title>{e.description}</td>
        </tr>
    }
}

/// `/admin/experts/:name`: the expert form.
#[component]
pub fn ExpertEditPage() -> impl IntoView {
    let params = use_params_map();
    let data = Resource::new(move || params.read().get("name").unwrap_or_default(), expert_editor);
    view! {
        <p><A href="/admin/experts">"← Experts"</A></p>
        <Loaded resource=data let:data>
            {let (form, tools) = data; view! { <ExpertFormView form tools /> }}
        </Loaded>
    }
}

#[component]
fn ExpertFormView(form: ExpertForm, tools: Vec<ToolInfo>) -> impl IntoView {
    let title = format!("Expert: {}", form.name);
    // The catalogue's tools, and any the expert has that the catalogue no longer knows (so they
    // can be unticked).
    let mut choices: Vec<(String, String)> = tools.into_iter().map(|t| (t.name, t.capability)).collect();
    for t in &form.tools {
        if !choices.iter().any(|(n, _)| n == t) {
            choices.push((t.clone(), "unknown tool".into()));
        }
    }
    let items = choices.into_iter().map(|(name, capability)| (name, Some(format!("needs {capability}")))).collect();
    let f = RwSignal::new(form);
    let status = FormStatus::default();
    let errors = status.errors;

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let form = f.get_untracked();
        status.notice.set(None);
        leptos::task::spawn_local(async move {
            if status.settle(save_expert(form).await).is_some() {
                status.notice.set(Some("Saved.".into()));
            }
        });
    };

    view! {
        <h1>{title}</h1>
        <form class="c-form c-card" on:submit=submit novalidate=true>
            <Checkbox id="e-enabled" checked=Signal::derive(move || f.with(|f| f.enabled))
                on_change=Callback::new(move |on| f.update(|f| f.enabled = on))>
                "Enabled (coordinators may call it)"
            </Checkbox>
            <TextArea id="e-description" label="Description (what the coordinator reads about when to call it)"
                field="description" value=bind!(f.description) errors rows="3" spellcheck="false" />
            <TextArea id="e-prompt" label="System prompt" field="system_prompt" value=bind!(f.system_prompt) errors
                rows="10" spellcheck="false" />
            <CheckGroup legend="Tools" field="tools" errors>
                <CheckList prefix="tool-" items code=true
                    chosen=Signal::derive(move || f.with(|f| f.tools.clone()))
                    toggle=Callback::new(move |(tool, on): (String, bool)| f.update(|f| tick(&mut f.tools, &tool, on))) />
                <p class="c-hint">"An expert only gets the tools its coordinator agent has."</p>
            </CheckGroup>
            <TextInput id="e-model" label="Model (empty: the coordinator's model)" field="model" value=bind!(f.model)
                errors autocomplete="off" />
            <TextInput id="e-max-tokens" label="Max tokens (50 to 8000)" field="max_tokens" value=bind!(f.max_tokens)
                errors inputmode="numeric" autocomplete="off" />
            <TextArea id="e-schema" label="Input schema (JSON Schema of the tool's input)" field="input_schema"
                value=bind!(f.input_schema) errors rows="10" spellcheck="false" />
            <Notice status />
            <button type="submit" class="c-primary">"Save"</button>
        </form>
    }
}
