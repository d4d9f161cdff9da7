//! `/admin/experts` (the list) and `/admin/experts/:name` (the form): the expert agents a
//! coordinator calls. They come with the product and are edited here, never created or renamed.
//! Administrators only.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::api::experts::{expert_editor, experts, save_expert};
use super::lists::{Failure, field_error};
use super::types::{ExpertForm, FieldError, ToolInfo};

#[component]
pub fn ExpertsPage() -> impl IntoView {
    let list = Resource::new(|| (), |_| experts());
    view! {
        <h1>"Experts"</h1>
        <p class="c-hint">"Coordinator agents (capability "<code>"expert_team"</code>") call these experts as "<code>"invoke_<name>"</code>" tools."</p>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(list) => view! {
                        <table class="c-table" id="experts">
                            <thead><tr><th>"Name"</th><th>"Enabled"</th><th>"Model"</th><th>"Max tokens"</th><th>"Tools"</th><th>"Description"</th></tr></thead>
                            <tbody>
                                {list.into_iter().map(|e| {
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
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                    Err(error) => view! { <Failure error /> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
pub fn ExpertEditPage() -> impl IntoView {
    let params = use_params_map();
    let data = Resource::new(move || params.read().get("name").unwrap_or_default(), expert_editor);
    view! {
        <p><A href="/admin/experts">"← Experts"</A></p>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok((form, tools)) => view! { <ExpertFormView form tools /> }.into_any(),
                    Err(error) => view! { <Failure error /> }.into_any(),
                }
            })}
        </Transition>
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
    let f = RwSignal::new(form);
    let errors = RwSignal::new(Vec::<FieldError>::new());
    let notice = RwSignal::new(None::<String>);

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let form = f.get_untracked();
        notice.set(None);
        leptos::task::spawn_local(async move {
            match save_expert(form).await {
                Ok(saved) if saved.errors.is_empty() => {
                    errors.set(vec![]);
                    notice.set(Some("Saved.".into()));
                }
                Ok(saved) => {
                    errors.set(saved.errors);
                    notice.set(Some("Please correct the fields marked below.".into()));
                }
                Err(e) => notice.set(Some(e.to_string())),
            }
        });
    };

    macro_rules! textarea {
        ($id:literal, $label:literal, $field:ident, $rows:literal) => {
            view! {
                <div class="c-field">
                    <label for=$id>$label</label>
                    <textarea id=$id rows=$rows spellcheck="false" prop:value=move || f.with(|f| f.$field.clone())
                        on:input=move |ev| f.update(|f| f.$field = event_target_value(&ev))
                        aria-describedby=concat!("err-", stringify!($field))></textarea>
                    {field_error(errors, stringify!($field))}
                </div>
            }
        };
    }

    view! {
        <h1>{title}</h1>
        <form class="c-form c-card" on:submit=submit novalidate=true>
            <label class="c-check" for="e-enabled">
                <input type="checkbox" id="e-enabled" prop:checked=move || f.with(|f| f.enabled)
                    on:change=move |ev| f.update(|f| f.enabled = event_target_checked(&ev)) />
                "Enabled (coordinators may call it)"
            </label>
            {textarea!("e-description", "Description (what the coordinator reads about when to call it)", description, "3")}
            {textarea!("e-prompt", "System prompt", system_prompt, "10")}
            <fieldset class="c-field">
                <legend>"Tools"</legend>
                {choices.into_iter().map(|(name, capability)| {
                    let n1 = name.clone();
                    let n2 = name.clone();
                    let id = format!("tool-{name}");
                    view! {
                        <label class="c-check" for=id.clone() title=format!("needs {capability}")>
                            <input type="checkbox" id=id.clone() prop:checked=move || f.with(|f| f.tools.contains(&n1))
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    f.update(|f| {
                                        f.tools.retain(|t| t != &n2);
                                        if on { f.tools.push(n2.clone()); }
                                    });
                                } />
                            <code>{name}</code>
                        </label>
                    }
                }).collect_view()}
                <p class="c-hint">"An expert only gets the tools its coordinator agent has."</p>
                {field_error(errors, "tools")}
            </fieldset>
            <div class="c-field">
                <label for="e-model">"Model (empty: the coordinator's model)"</label>
                <input id="e-model" autocomplete="off" prop:value=move || f.with(|f| f.model.clone())
                    on:input=move |ev| f.update(|f| f.model = event_target_value(&ev))
                    aria-describedby="err-model" />
                {field_error(errors, "model")}
            </div>
            <div class="c-field">
                <label for="e-max-tokens">"Max tokens (50 to 8000)"</label>
                <input id="e-max-tokens" inputmode="numeric" autocomplete="off"
                    prop:value=move || f.with(|f| f.max_tokens.clone())
                    on:input=move |ev| f.update(|f| f.max_tokens = event_target_value(&ev))
                    aria-describedby="err-max_tokens" />
                {field_error(errors, "max_tokens")}
            </div>
            {textarea!("e-schema", "Input schema (JSON Schema of the tool's input)", input_schema, "10")}
            {move || notice.get().map(|n| view! { <p class="c-notice" role="status">{n}</p> })}
            <button type="submit" class="c-primary">"Save"</button>
        </form>
    }
}
