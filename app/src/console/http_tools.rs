//! `/admin/tools` (the list) and `/admin/tools/:id` (the form; `new` creates one): tools the
//! owner defines, which Parley answers by calling the owner's HTTPS endpoint. Administrators
//! only.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::api::http_tools::{delete_http_tool, http_tool, http_tools, save_http_tool};
use super::fields::{FormStatus, Notice, SelectField, TextArea, TextInput, bind};
use super::layout::{confirm, go_to};
use super::loaded::Loaded;
use super::types::{HttpToolForm, HttpToolItem};

const METHODS: &[(&str, &str)] =
    &[("GET", "GET"), ("POST", "POST"), ("PUT", "PUT"), ("PATCH", "PATCH"), ("DELETE", "DELETE")];

const EXAMPLE_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "order_id": { "type": "string", "description": "The order number, e.g. A-1042" }
  },
  "required": ["order_id"],
  "additionalProperties": false
}"#;

/// `/admin/tools`: every owner-defined tool.
#[component]
pub fn HttpToolsPage() -> impl IntoView {
    let list = Resource::new(|| (), |_| http_tools());
    view! {
        <h1>"Tools"</h1>
        <p class="c-hint">
            "Your own tools: the model calls them with checked arguments and Parley sends the request to your endpoint. \
             An agent gets a tool when it has the tool's capability (Agents → Capabilities); MCP clients of that agent get it too."
        </p>
        <p><A href="/admin/tools/new">"New tool"</A></p>
        <Loaded resource=list let:list>
            {if list.is_empty() {
                view! { <p class="c-hint" id="no-tools">"No tools yet."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table" id="http-tools">
                        <thead><tr><th>"Name"</th><th>"Capability"</th><th>"Endpoint"</th><th>"Headers"</th><th>"Agents"</th><th>"Description"</th></tr></thead>
                        <tbody>{list.into_iter().map(|tool| view! { <ToolRow tool /> }).collect_view()}</tbody>
                    </table>
                }.into_any()
            }}
        </Loaded>
    }
}

#[component]
fn ToolRow(tool: HttpToolItem) -> impl IntoView {
    let t = tool;
    let href = format!("/admin/tools/{}", t.id);
    let headers = if t.header_names.is_empty() { "none".to_owned() } else { t.header_names.join(", ") };
    let agents = if t.agents.is_empty() { "none yet".to_owned() } else { t.agents.join(", ") };
    let title = t.description.clone();
    let key = t.name.clone();
    view! {
        <tr data-name=key>
            <td><A href=href><code>{t.name}</code></A></td>
            <td><code>{t.capability}</code></td>
            <td class="c-clip"><code>{format!("{} {}", t.method, t.url)}</code></td>
            <td>{headers}</td>
            <td>{agents}</td>
            <td class="c-clip" title=title>{t.description}</td>
        </tr>
    }
}

/// `/admin/tools/:id`: the tool form (`new` for a new tool).
#[component]
pub fn HttpToolEditPage() -> impl IntoView {
    let params = use_params_map();
    let data = Resource::new(
        move || params.read().get("id").unwrap_or_default(),
        |id| async move {
            if id == "new" {
                Ok(HttpToolForm {
                    method: "GET".into(),
                    parameters: EXAMPLE_SCHEMA.into(),
                    timeout_ms: "10000".into(),
                    ..HttpToolForm::default()
                })
            } else {
                http_tool(id).await
            }
        },
    );
    view! {
        <p><A href="/admin/tools">"← Tools"</A></p>
        <Loaded resource=data let:form>
            <ToolFormView form />
        </Loaded>
    }
}

#[component]
fn ToolFormView(form: HttpToolForm) -> impl IntoView {
    let is_new = form.id.is_none();
    let title = if is_new { "New tool".to_owned() } else { format!("Tool: {}", form.name) };
    let saved_headers = form.saved_headers.clone();
    let f = RwSignal::new(form);
    let status = FormStatus::default();
    let errors = status.errors;
    let notice = status.notice;

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let form = f.get_untracked();
        notice.set(None);
        leptos::task::spawn_local(async move {
            if let Some(id) = status.settle(save_http_tool(form).await) {
                if is_new {
                    go_to(&format!("/admin/tools/{id}"));
                } else {
                    // The headers were sealed: the form forgets what was typed.
                    f.update(|f| f.headers.clear());
                    notice.set(Some("Saved. Agents with its capability get the tool from their next message.".into()));
                }
            }
        });
    };
    let remove = move |_| {
        let Some(id) = f.with_untracked(|f| f.id.clone()) else { return };
        if !confirm("Delete this tool? Agents will no longer be offered it.") {
            return;
        }
        leptos::task::spawn_local(async move {
            match delete_http_tool(id).await {
                Ok(()) => go_to("/admin/tools"),
                Err(e) => notice.set(Some(e.to_string())),
            }
        });
    };
    let headers_label = if saved_headers.is_empty() {
        "Headers (one `Name: value` per line, e.g. `Authorization: Bearer …`; stored encrypted)".to_owned()
    } else {
        format!(
            "Headers — saved: {}. Leave empty to keep them, type new lines to replace them all, or `-` to remove them.",
            saved_headers.join(", ")
        )
    };

    view! {
        <h1>{title}</h1>
        <form class="c-form c-card" id="http-tool-form" on:submit=submit novalidate=true>
            <TextInput id="t-name" label="Name (what the model calls; letters, digits, _ and -)" field="name"
                value=bind!(f.name) errors autocomplete="off" />
            <TextArea id="t-description" label="Description (what the tool does and when to use it, for the model)"
                field="description" value=bind!(f.description) errors rows="3" />
            <TextInput id="t-capability" label="Capability (agents with it get the tool, e.g. orders)" field="capability"
                value=bind!(f.capability) errors autocomplete="off" />
            <SelectField id="t-method" label="Method" field="method" value=bind!(f.method) errors options=METHODS />
            <TextInput id="t-url" label="Endpoint (https; {argument} in the path is replaced by that argument)" field="url"
                value=bind!(f.url) errors autocomplete="off" placeholder="https://shop.example.com/api/orders/{order_id}" />
            <TextArea id="t-parameters" label="Arguments (JSON Schema of an object; GET and DELETE send them as the query string, others as a JSON body)"
                field="parameters" value=bind!(f.parameters) errors rows="10" spellcheck="false" />
            <TextArea id="t-headers" label=headers_label field="headers" value=bind!(f.headers) errors
                rows="3" spellcheck="false" />
            <TextInput id="t-timeout" label="Timeout in milliseconds (500 to 30000)" field="timeout_ms"
                value=bind!(f.timeout_ms) errors inputmode="numeric" autocomplete="off" />
            <Notice status />
            <button type="submit" class="c-primary">{if is_new { "Create tool" } else { "Save" }}</button>
            {(!is_new).then(|| view! { <button type="button" class="c-danger" on:click=remove>"Delete tool"</button> })}
        </form>
    }
}
