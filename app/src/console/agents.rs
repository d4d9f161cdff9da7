//! `/admin/agents` (list), `/admin/agents/new` and `/admin/agents/:id` (the form, in
//! [`super::agent_form`]), and `/admin/agents/:id/embed` (the snippet and a preview).
//! Administrators only: the server functions refuse operators.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::agent_form::AgentFormView;
use super::api::agents::{agent_editor, agents, embed_info};
use super::layout::copy_text;
use super::loaded::Loaded;
use super::types::{AgentForm, AgentFormData};

/// `/admin/agents`: every agent, with links to its form and its snippet.
#[component]
pub fn AgentsPage() -> impl IntoView {
    let list = Resource::new(|| (), |_| agents());
    view! {
        <h1>"Agents"</h1>
        <p><A href="/admin/agents/new" attr:class="c-button">"New agent"</A></p>
        <Loaded resource=list let:list>
            <table class="c-table" id="agents">
                <thead><tr><th>"Name"</th><th>"Key"</th><th>"Vertical"</th><th>"Model"</th><th>"Capabilities"</th><th></th></tr></thead>
                <tbody>
                    {list.into_iter().map(|a| view! {
                        <tr>
                            <td><A href=format!("/admin/agents/{}", a.id)>{a.name}</A></td>
                            <td><code>{a.key}</code></td>
                            <td>{a.vertical}</td>
                            <td>
                                {format!("{} · {}", a.provider, a.model)}
                                {a.unpriced.then(|| view! {
                                    <span class="c-warn" title="No price row: charged the default price for unpriced models">" ⚠ no price"</span>
                                })}
                            </td>
                            <td>{a.capabilities.join(", ")}</td>
                            <td>
                                <A href=format!("/admin/agents/{}/embed", a.id)>"Embed"</A>
                                " · "
                                <A href=format!("/admin/agents/{}/versions", a.id)>"Versions"</A>
                                " · "
                                <A href=format!("/admin/agents/{}/tests", a.id)>"Tests"</A>
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </Loaded>
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
        color_scheme: "light".into(),
        launcher_icon: "chat".into(),
        panel_width: "380".into(),
        panel_height: "640".into(),
        language: "auto".into(),
        budget_usd: 0.5,
        ..Default::default()
    }
}

/// `/admin/agents/new` and `/admin/agents/:id`: the agent form.
#[component]
pub fn AgentEditPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").filter(|id| id != "new");
    let data = Resource::new(id, agent_editor);
    view! {
        <p>
            <A href="/admin/agents">"← Agents"</A>
            {move || id().map(|id| view! {
                " · " <A href=format!("/admin/agents/{id}/versions")>"Versions and draft"</A>
                " · " <A href=format!("/admin/agents/{id}/tests")>"Answer tests"</A>
            })}
        </p>
        <Loaded resource=data let:data>
            {let AgentFormData { form, tools, unpriced, model_priced } = data;
                view! { <AgentFormView form tools unpriced model_priced /> }}
        </Loaded>
    }
}

/// `/admin/agents/:id/embed`: the snippet to paste and a preview.
#[component]
pub fn EmbedSnippetPage() -> impl IntoView {
    let params = use_params_map();
    let data = Resource::new(move || params.read().get("id").unwrap_or_default(), embed_info);
    view! {
        <p><A href="/admin/agents">"← Agents"</A></p>
        <Loaded resource=data let:data>
            {let (agent, base) = data; view! { <Snippet agent base /> }}
        </Loaded>
    }
}

/// The embed snippet with a copy button, and the widget as a website would show it.
#[component]
fn Snippet(agent: AgentForm, base: String) -> impl IntoView {
    let snippet = format!("<script src=\"{base}/widget.js\" data-agent=\"{}\" async></script>", agent.key);
    let copied = RwSignal::new(false);
    let to_copy = snippet.clone();
    let side = if agent.launcher_position == "left" { "left" } else { "right" };
    view! {
        <h1>{format!("Embed {}", agent.name)}</h1>
        <p>"Paste this before " <code>"</body>"</code> " on every page of the website:"</p>
        <pre class="c-snippet" id="snippet">{snippet}</pre>
        <button type="button" on:click=move |_| { copy_text(&to_copy); copied.set(true); }>
            {move || if copied.get() { "Copied" } else { "Copy" }}
        </button>
        <h2>"Preview"</h2>
        <div class="c-preview">
            <iframe src=format!("/embed/{}", agent.key) title="Widget preview" class=format!("c-preview-panel c-preview-{side}")></iframe>
            <span class=format!("c-preview-launcher c-preview-{side}") style=format!("background:{}", agent.theme_color) aria-hidden="true">"💬"</span>
        </div>
    }
}
