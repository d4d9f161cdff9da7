//! `/admin/tokens`: MCP access tokens per agent (created here, shown once, revoked here).

use leptos::prelude::*;

use super::api::tokens::{create_token, revoke_token, tokens};
use super::fields::ErrorLine;
use super::layout::{confirm, copy_text};
use super::lists::{AgentChoice, when};
use super::loaded::Loaded;
use super::types::NewToken;

/// The modules a token may be limited to (the server's `mcp_tokens::Module`; a test keeps the
/// two lists alike), with what each holds.
const MODULES: [(&str, &str); 4] = [
    ("knowledge", " knowledge (list and search the knowledge bases)"),
    ("news", " news (GetNewsForDate)"),
    ("trending", " trending questions"),
    ("tools", " other tools (date and time, web search, exchange rates…)"),
];

/// The modules ticked, as the server takes them: empty when all are ticked.
fn chosen_modules(ticked: &[&'static str]) -> String {
    if MODULES.iter().all(|(m, _)| ticked.contains(m)) {
        return String::new();
    }
    // None ticked is refused by the server ("name at least one module").
    if ticked.is_empty() {
        return ",".into();
    }
    MODULES.iter().filter(|(m, _)| ticked.contains(m)).map(|(m, _)| *m).collect::<Vec<_>>().join(",")
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use parley_engine::store::mcp_tokens::Module;

    #[test]
    fn the_forms_modules_are_the_servers() {
        let names: Vec<&str> = MODULES.iter().map(|(m, _)| *m).collect();
        assert_eq!(names, Module::ALL.map(Module::as_str));
        assert_eq!(chosen_modules(&names), "", "all ticked: all, future modules too");
        assert_eq!(chosen_modules(&["tools", "news"]), "news,tools");
        assert!(Module::parse_list(&chosen_modules(&[])).is_err(), "none ticked is refused");
    }
}

/// `/admin/tokens`: the MCP tokens, and a form for a new one.
#[component]
pub fn TokensPage() -> impl IntoView {
    let version = RwSignal::new(0u64);
    let list = Resource::new(move || version.get(), |_| tokens());
    let created = RwSignal::new(None::<NewToken>);
    let error = RwSignal::new(None::<String>);
    let revoke = move |id: String| {
        if !confirm("Revoke this token? Clients using it stop working at once.") {
            return;
        }
        leptos::task::spawn_local(async move {
            if let Err(e) = revoke_token(id).await {
                error.set(Some(e.to_string()));
            }
            version.update(|v| *v += 1);
        });
    };
    view! {
        <h1>"MCP tokens"</h1>
        <p class="c-hint">"MCP clients (desktop assistants, IDEs, other agents) use an agent's tools through "<code>"/mcp"</code>" with one of these tokens."</p>
        <CreatedToken created />
        <Loaded resource=list let:list>
            <table class="c-table" id="tokens">
                <thead><tr><th>"Name"</th><th>"Agent"</th><th>"Token"</th><th>"Tools"</th><th>"Modules"</th><th>"Output"</th><th>"Created (UTC)"</th><th></th></tr></thead>
                <tbody>{list.into_iter().map(|t| {
                    let id = t.id.clone();
                    view! {
                        <tr class:c-revoked=t.revoked>
                            <td>{t.name}</td>
                            <td><code>{t.agent_key}</code></td>
                            <td><code>{format!("{}…", t.prefix)}</code></td>
                            <td>{t.feature_set}</td>
                            <td>{if t.modules.is_empty() { "all".to_owned() } else { t.modules.replace(',', ", ") }}</td>
                            <td>{t.output}</td>
                            <td>{when(t.created_at)}</td>
                            <td>{if t.revoked {
                                view! { <span class="c-hint">"revoked"</span> }.into_any()
                            } else {
                                view! { <button type="button" on:click=move |_| revoke(id.clone())>"Revoke"</button> }.into_any()
                            }}</td>
                        </tr>
                    }
                }).collect_view()}</tbody>
            </table>
        </Loaded>
        <NewTokenForm version created error />
    }
}

/// A token just made: its URL (shown once), a client configuration, the older SSE URL.
#[component]
fn CreatedToken(created: RwSignal<Option<NewToken>>) -> impl IntoView {
    move || {
        created.get().map(|t| {
            let url = t.url.clone();
            let config = format!("{{\n  \"mcpServers\": {{\n    \"parley\": {{ \"type\": \"http\", \"url\": \"{}\" }}\n  }}\n}}", t.url);
            view! {
                <section class="c-card c-new-token" role="status">
                    <h2>"New token — copy it now, it is not shown again"</h2>
                    <pre id="new-token-url">{t.url.clone()}</pre>
                    <button type="button" on:click=move |_| copy_text(&url)>"Copy URL"</button>
                    <p class="c-hint">"Client configuration:"</p>
                    <pre>{config}</pre>
                    <p class="c-hint">"Clients that only speak the older SSE transport ("<code>"\"transportType\": \"sse\""</code>") use:"</p>
                    <pre id="new-token-sse-url">{t.sse_url.clone()}</pre>
                </section>
            }
        })
    }
}

/// The form for a new token: agent, name, tool definitions, output, modules.
#[component]
fn NewTokenForm(
    version: RwSignal<u64>,
    created: RwSignal<Option<NewToken>>,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let name = RwSignal::new("MCP client".to_owned());
    let feature_set = RwSignal::new("base".to_owned());
    let output = RwSignal::new("raw".to_owned());
    // Unticked modules are left out; all ticked means "all" (future modules too).
    let modules = RwSignal::new(MODULES.map(|(m, _)| m).to_vec());
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            match create_token(
                agent.get_untracked(),
                name.get_untracked(),
                feature_set.get_untracked(),
                output.get_untracked(),
                chosen_modules(&modules.get_untracked()),
            )
            .await
            {
                Ok(t) => {
                    error.set(None);
                    created.set(Some(t));
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <form class="c-card c-form" on:submit=create>
            <h2>"New token"</h2>
            <AgentChoice id="t-agent" agent />
            <label for="t-name">"Name"</label>
            <input id="t-name" prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) />
            <label for="t-features">"Tool definitions"</label>
            <select id="t-features" on:change=move |ev| feature_set.set(event_target_value(&ev))>
                <option value="base">"base: list of knowledge bases + general search"</option>
                <option value="detail">"detail: one search tool per knowledge base"</option>
            </select>
            <label for="t-output">"Output"</label>
            <select id="t-output" on:change=move |ev| output.set(event_target_value(&ev))>
                <option value="raw">"raw (JSON)"</option>
                <option value="text">"text (Markdown)"</option>
            </select>
            <fieldset class="c-modules">
                <legend>"Modules it may use"</legend>
                {MODULES.into_iter().map(|(m, label)| {
                    let id = format!("t-module-{m}");
                    view! {
                        <label for=id.clone()>
                            <input type="checkbox" id=id.clone()
                                prop:checked=move || modules.with(|ms| ms.contains(&m))
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    modules.update(|ms| {
                                        ms.retain(|x| *x != m);
                                        if on {
                                            ms.push(m);
                                        }
                                    });
                                } />
                            {label}
                        </label>
                    }
                }).collect_view()}
            </fieldset>
            <ErrorLine error />
            <button type="submit" class="c-primary">"Create token"</button>
        </form>
    }
}
