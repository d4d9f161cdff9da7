//! `/admin/experts` (the list) and `/admin/experts/:name` (the form): the expert agents a
//! coordinator calls. They come with the product and are edited here, never renamed; a
//! coordinator can have its own copy of one (its own prompt, tools and model), made and deleted
//! here. Administrators only.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::api::experts::{copy_expert, delete_expert_copy, expert_editor, experts, save_expert};
use super::fields::{
    CheckGroup, CheckItem, CheckList, Checkbox, ErrorLine, FormStatus, Notice, TextArea, TextInput, bind, tick,
};
use super::layout::{confirm, go_to};
use super::loaded::Loaded;
use super::types::{ExpertForm, ExpertItem, ToolInfo};

/// `/admin/experts`: every expert.
#[component]
pub fn ExpertsPage() -> impl IntoView {
    let list = Resource::new(|| (), |_| experts());
    view! {
        <h1>"Experts"</h1>
        <p class="c-hint">"Coordinator agents (capability "<code>"expert_team"</code>") call these experts as "<code>"invoke_<name>"</code>" tools. \
            A coordinator chooses its team with its tools (Agents → Only some of the tools), and can have its own copy of an expert, with its own prompt."</p>
        <Loaded resource=list let:list>
            <table class="c-table" id="experts">
                <thead><tr><th>"Name"</th><th>"Team"</th><th>"Enabled"</th><th>"Model"</th><th>"Max tokens"</th><th>"Tools"</th><th>"Description"</th></tr></thead>
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
    let team = match (&e.agent, &e.based_on) {
        (Some(agent), Some(based_on)) => format!("{agent}'s copy of {based_on}"),
        _ => "every coordinator".to_owned(),
    };
    view! {
        <tr data-name=key>
            <td><A href=href>{e.name}</A></td>
            <td>{team}</td>
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
            {let (form, tools, coordinators) = data; view! {
                <ExpertFormView form=form.clone() tools />
                <CopyControls form coordinators />
            }}
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
    let items = choices
        .into_iter()
        .map(|(name, capability)| CheckItem { name, label: None, title: Some(format!("needs {capability}")) })
        .collect();
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

/// A shared expert: make a coordinator's own copy. A copy: delete it (the coordinator has the
/// shared expert again).
#[component]
fn CopyControls(form: ExpertForm, coordinators: Vec<(String, String)>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let name = form.name.clone();
    if let Some((agent, based_on)) = form.copy_of {
        let tool = format!("invoke_{based_on}");
        let remove = move |_| {
            if !confirm("Delete this copy? The coordinator will call the shared expert again.") {
                return;
            }
            let name = name.clone();
            let back = format!("/admin/experts/{based_on}");
            leptos::task::spawn_local(async move {
                match delete_expert_copy(name).await {
                    Ok(()) => go_to(&back),
                    Err(e) => error.set(Some(e.to_string())),
                }
            });
        };
        return view! {
            <section class="c-card" id="expert-copy">
                <p>{format!("This is {agent}'s own copy: it answers as ")}<code>{tool}</code>" for that coordinator only."</p>
                <button type="button" class="c-danger" on:click=remove>"Delete this copy"</button>
                <ErrorLine error />
            </section>
        }
        .into_any();
    }
    if coordinators.is_empty() {
        return view! { <p class="c-hint">"No coordinator agent (capability expert_team) to copy it for."</p> }
            .into_any();
    }
    let chosen = RwSignal::new(coordinators[0].0.clone());
    let make = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let (name, agent) = (name.clone(), chosen.get_untracked());
        leptos::task::spawn_local(async move {
            match copy_expert(name, agent).await {
                Ok(copy) => go_to(&format!("/admin/experts/{copy}")),
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <form class="c-form c-card" id="expert-copy" on:submit=make>
            <h2>"A coordinator's own copy"</h2>
            <p class="c-hint">"The copy starts the same; edit its prompt, tools and model for that coordinator only. Other coordinators keep this one."</p>
            <div class="c-field">
                <label for="copy-agent">"Coordinator"</label>
                <select id="copy-agent" on:change=move |ev| chosen.set(event_target_value(&ev))>
                    {coordinators.into_iter().map(|(id, key)| view! { <option value=id>{key}</option> }).collect_view()}
                </select>
            </div>
            <button type="submit">"Make a copy"</button>
            <ErrorLine error />
        </form>
    }
    .into_any()
}
