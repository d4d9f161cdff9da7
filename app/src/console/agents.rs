//! `/admin/agents` (list), `/admin/agents/new` and `/admin/agents/:id` (the form), and
//! `/admin/agents/:id/embed` (the snippet and a preview). Administrators only: the server
//! functions refuse operators.

use std::collections::BTreeSet;

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::api::agents::{agent_editor, agents, embed_info, save_agent};
use super::layout::{copy_text, go_to};
use super::lists::{Failure, field_error};
use super::types::{AgentForm, FieldError, ToolInfo};

#[component]
pub fn AgentsPage() -> impl IntoView {
    let list = Resource::new(|| (), |_| agents());
    view! {
        <h1>"Agents"</h1>
        <p><A href="/admin/agents/new" attr:class="c-button">"New agent"</A></p>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(list) => view! {
                        <table class="c-table" id="agents">
                            <thead><tr><th>"Name"</th><th>"Key"</th><th>"Vertical"</th><th>"Model"</th><th>"Capabilities"</th><th></th></tr></thead>
                            <tbody>
                                {list.into_iter().map(|a| view! {
                                    <tr>
                                        <td><A href=format!("/admin/agents/{}", a.id)>{a.name}</A></td>
                                        <td><code>{a.key}</code></td>
                                        <td>{a.vertical}</td>
                                        <td>{format!("{} · {}", a.provider, a.model)}</td>
                                        <td>{a.capabilities.join(", ")}</td>
                                        <td><A href=format!("/admin/agents/{}/embed", a.id)>"Embed"</A></td>
                                    </tr>
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

/// Defaults of a new agent.
pub fn blank() -> AgentForm {
    AgentForm {
        vertical: "help_center".into(),
        capabilities: vec!["ticket_escalation".into()],
        provider: "demo".into(),
        model: "parley-demo".into(),
        greeting: "Hi! How can I help?".into(),
        theme_color: "#4f46e5".into(),
        launcher_position: "right".into(),
        budget_usd: 0.5,
        ..Default::default()
    }
}

#[component]
pub fn AgentEditPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").filter(|id| id != "new");
    let data = Resource::new(id, agent_editor);
    view! {
        <p><A href="/admin/agents">"← Agents"</A></p>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok((form, tools)) => view! { <AgentFormView form tools /> }.into_any(),
                    Err(error) => view! { <Failure error /> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn AgentFormView(form: AgentForm, tools: Vec<ToolInfo>) -> impl IntoView {
    let is_new = form.id.is_none();
    let title = if is_new { "New agent".to_owned() } else { format!("Agent: {}", form.name) };
    let hint = form.api_key_hint.clone();
    let origins = RwSignal::new(form.allowed_origins.join("\n"));
    let limit_tools = RwSignal::new(form.enabled_tools.is_some());
    let f = RwSignal::new(form);
    let errors = RwSignal::new(Vec::<FieldError>::new());
    let notice = RwSignal::new(None::<String>);
    let capabilities: Vec<String> =
        tools.iter().map(|t| t.capability.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let tools = StoredValue::new(tools);

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let mut form = f.get_untracked();
        form.allowed_origins =
            origins.get_untracked().lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
        if !limit_tools.get_untracked() {
            form.enabled_tools = None;
        }
        notice.set(None);
        leptos::task::spawn_local(async move {
            match save_agent(form).await {
                Ok(saved) if saved.errors.is_empty() => {
                    errors.set(vec![]);
                    match (is_new, saved.id) {
                        (true, Some(id)) => go_to(&format!("/admin/agents/{id}")),
                        _ => {
                            notice.set(Some("Saved.".into()));
                            f.update(|f| f.new_api_key.clear());
                        }
                    }
                }
                Ok(saved) => {
                    errors.set(saved.errors);
                    notice.set(Some("Please correct the fields marked below.".into()));
                }
                Err(e) => notice.set(Some(e.to_string())),
            }
        });
    };

    macro_rules! text_input {
        ($id:literal, $label:literal, $field:ident) => {
            view! {
                <div class="c-field">
                    <label for=$id>$label</label>
                    <input id=$id prop:value=move || f.with(|f| f.$field.clone())
                        on:input=move |ev| f.update(|f| f.$field = event_target_value(&ev))
                        aria-describedby=concat!("err-", stringify!($field)) />
                    {field_error(errors, stringify!($field))}
                </div>
            }
        };
    }

    view! {
        <h1>{title}</h1>
        <form class="c-form c-card" on:submit=submit novalidate=true>
            {text_input!("a-name", "Name", name)}
            {text_input!("a-key", "Public key (in the embed snippet)", key)}
            {text_input!("a-vertical", "Vertical", vertical)}
            <fieldset class="c-field">
                <legend>"Capabilities"</legend>
                {capabilities.into_iter().map(|cap| {
                    let c1 = cap.clone();
                    let c2 = cap.clone();
                    let id = format!("cap-{cap}");
                    view! {
                        <label class="c-check" for=id.clone()>
                            <input type="checkbox" id=id.clone() prop:checked=move || f.with(|f| f.capabilities.contains(&c1))
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    f.update(|f| {
                                        f.capabilities.retain(|c| c != &c2);
                                        if on { f.capabilities.push(c2.clone()); }
                                    });
                                } />
                            {cap}
                        </label>
                    }
                }).collect_view()}
                {field_error(errors, "capabilities")}
            </fieldset>
            <fieldset class="c-field">
                <legend>"Tools"</legend>
                <label class="c-check" for="limit-tools">
                    <input type="checkbox" id="limit-tools" prop:checked=limit_tools
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            limit_tools.set(on);
                            if on && f.with_untracked(|f| f.enabled_tools.is_none()) {
                                f.update(|f| f.enabled_tools = Some(vec![]));
                            }
                        } />
                    "Only some of the tools the capabilities allow"
                </label>
                <Show when=move || limit_tools.get()>
                    {move || tools.with_value(|tools| tools.iter()
                        .filter(|t| f.with(|f| f.capabilities.contains(&t.capability)))
                        .map(|t| {
                            let n1 = t.name.clone();
                            let n2 = t.name.clone();
                            let id = format!("tool-{}", t.name);
                            view! {
                                <label class="c-check" for=id.clone()>
                                    <input type="checkbox" id=id.clone()
                                        prop:checked=move || f.with(|f| f.enabled_tools.as_ref().is_some_and(|t| t.contains(&n1)))
                                        on:change=move |ev| {
                                            let on = event_target_checked(&ev);
                                            f.update(|f| {
                                                let list = f.enabled_tools.get_or_insert_with(Vec::new);
                                                list.retain(|t| t != &n2);
                                                if on { list.push(n2.clone()); }
                                            });
                                        } />
                                    <code>{t.name.clone()}</code>
                                </label>
                            }
                        }).collect_view())}
                </Show>
                {field_error(errors, "enabled_tools")}
            </fieldset>
            <div class="c-field">
                <label for="a-provider">"Provider"</label>
                <select id="a-provider" on:change=move |ev| f.update(|f| f.provider = event_target_value(&ev))>
                    <option value="demo" selected=move || f.with(|f| f.provider == "demo")>"Offline demo model (no API key)"</option>
                    <option value="openai" selected=move || f.with(|f| f.provider == "openai")>"OpenAI-compatible API"</option>
                    <option value="anthropic" selected=move || f.with(|f| f.provider == "anthropic")>"Anthropic Messages API"</option>
                </select>
                {field_error(errors, "provider")}
            </div>
            {text_input!("a-base-url", "API base URL (e.g. https://api.openai.com/v1)", base_url)}
            <div class="c-field">
                <label for="a-api-key">"API key"</label>
                <input id="a-api-key" type="password" autocomplete="off"
                    placeholder=hint.clone().map(|h| format!("stored: {h} — leave empty to keep")).unwrap_or_else(|| "not set".into())
                    prop:value=move || f.with(|f| f.new_api_key.clone())
                    on:input=move |ev| f.update(|f| f.new_api_key = event_target_value(&ev)) />
                {field_error(errors, "new_api_key")}
            </div>
            {text_input!("a-model", "Model", model)}
            {text_input!("a-fallback", "Fallback model (optional)", fallback_model)}
            <div class="c-field">
                <label for="a-prompt">"System prompt"</label>
                <textarea id="a-prompt" rows="8" prop:value=move || f.with(|f| f.system_prompt.clone())
                    on:input=move |ev| f.update(|f| f.system_prompt = event_target_value(&ev))></textarea>
                {field_error(errors, "system_prompt")}
            </div>
            {text_input!("a-greeting", "Greeting", greeting)}
            <div class="c-field">
                <label for="a-color">"Theme colour"</label>
                <input id="a-color" type="color" prop:value=move || f.with(|f| f.theme_color.clone())
                    on:input=move |ev| f.update(|f| f.theme_color = event_target_value(&ev)) />
                {field_error(errors, "theme_color")}
            </div>
            <div class="c-field">
                <label for="a-position">"Launcher position"</label>
                <select id="a-position" on:change=move |ev| f.update(|f| f.launcher_position = event_target_value(&ev))>
                    <option value="right" selected=move || f.with(|f| f.launcher_position == "right")>"Bottom right"</option>
                    <option value="left" selected=move || f.with(|f| f.launcher_position == "left")>"Bottom left"</option>
                </select>
                {field_error(errors, "launcher_position")}
            </div>
            <div class="c-field">
                <label for="a-origins">"Allowed origins (one per line; empty: any website)"</label>
                <textarea id="a-origins" rows="3" prop:value=origins on:input=move |ev| origins.set(event_target_value(&ev))></textarea>
                {field_error(errors, "allowed_origins")}
            </div>
            <div class="c-field">
                <label for="a-budget">"Budget per conversation (US$)"</label>
                <input id="a-budget" type="number" step="0.01" min="0.01"
                    prop:value=move || f.with(|f| f.budget_usd.to_string())
                    on:input=move |ev| f.update(|f| f.budget_usd = event_target_value(&ev).parse().unwrap_or(f64::NAN)) />
                {field_error(errors, "budget_usd")}
            </div>
            {text_input!("a-max-turns", "Tool hops per turn (empty: 3, or 15 with expert_team)", max_turns)}
            {text_input!("a-daily-cap", "Daily spend cap of this agent (US$, empty: none)", daily_cap_usd)}
            {move || notice.get().map(|n| view! { <p class="c-notice" role="status">{n}</p> })}
            <button type="submit" class="c-primary">"Save"</button>
        </form>
    }
}

#[component]
pub fn EmbedSnippetPage() -> impl IntoView {
    let params = use_params_map();
    let data = Resource::new(move || params.read().get("id").unwrap_or_default(), embed_info);
    view! {
        <p><A href="/admin/agents">"← Agents"</A></p>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok((a, base)) => {
                        let snippet = format!("<script src=\"{base}/widget.js\" data-agent=\"{}\" async></script>", a.key);
                        let copied = RwSignal::new(false);
                        let to_copy = snippet.clone();
                        let side = if a.launcher_position == "left" { "left" } else { "right" };
                        view! {
                            <h1>{format!("Embed {}", a.name)}</h1>
                            <p>"Paste this before " <code>"</body>"</code> " on every page of the website:"</p>
                            <pre class="c-snippet" id="snippet">{snippet}</pre>
                            <button type="button" on:click=move |_| { copy_text(&to_copy); copied.set(true); }>
                                {move || if copied.get() { "Copied" } else { "Copy" }}
                            </button>
                            <h2>"Preview"</h2>
                            <div class="c-preview">
                                <iframe src=format!("/embed/{}", a.key) title="Widget preview" class=format!("c-preview-panel c-preview-{side}")></iframe>
                                <span class=format!("c-preview-launcher c-preview-{side}") style=format!("background:{}", a.theme_color) aria-hidden="true">"💬"</span>
                            </div>
                        }.into_any()
                    }
                    Err(error) => view! { <Failure error /> }.into_any(),
                }
            })}
        </Transition>
    }
}
