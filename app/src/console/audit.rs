//! `/admin/audit`: what console users (and the command line) did that changes or reveals data.

use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};

use super::api::audit::audit_log;
use super::lists::{Pager, page_param, query, when};
use super::loaded::Loaded;

/// The action groups the filter offers: `(value, text)`; `""` is any.
const GROUPS: &[(&str, &str)] = &[
    ("", "Any action"),
    ("sign_in", "Sign-ins"),
    ("conversation", "Conversations (takeover, replies…)"),
    ("agent", "Agents and prompts"),
    ("expert", "Experts"),
    ("tool", "Tools"),
    ("mcp_token", "MCP tokens"),
    ("identity", "Identity settings and secrets"),
    ("person", "Exports and deletions"),
];

/// `/admin/audit`: the log, newest first, filtered by action and by who.
#[component]
pub fn AuditPage() -> impl IntoView {
    let q = use_query_map();
    let action = move || q.read().get("action").unwrap_or_default();
    let actor = move || q.read().get("actor").unwrap_or_default();
    let page = move || page_param(&q.read());
    let list = Resource::new(
        move || (action(), actor(), page()),
        |(action, actor, page)| audit_log(Some(action), Some(actor), page),
    );
    let navigate = use_navigate();
    let go = move |action: String, actor: String| {
        navigate(&format!("/admin/audit{}", query(&[("action", &action), ("actor", &actor)])), Default::default());
    };
    let go2 = go.clone();
    view! {
        <h1>"Audit log"</h1>
        <p class="c-hint">"What people did in the console (and on the command line) that changes or reveals data: who, when, what. Message contents are never recorded."</p>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <label for="a-action">"Action"</label>
            <select id="a-action" on:change=move |ev| go(event_target_value(&ev), actor())>
                {GROUPS.iter().map(|(v, l)| view! { <option value=*v selected=move || action() == *v>{*l}</option> }).collect_view()}
            </select>
            <label for="a-actor">"Who (email)"</label>
            <input id="a-actor" type="search" prop:value=actor on:change=move |ev| go2(action(), event_target_value(&ev)) />
        </form>
        <Loaded resource=list let:p>
            <table class="c-table" id="audit">
                <thead><tr><th>"When (UTC)"</th><th>"Who"</th><th>"Action"</th><th>"On"</th><th>"Detail"</th></tr></thead>
                <tbody>{p.items.into_iter().map(|e| view! {
                    <tr>
                        <td>{when(e.at)}</td>
                        <td>{e.actor}</td>
                        <td><code>{e.action}</code></td>
                        <td>{e.target.unwrap_or_default()}</td>
                        <td>{e.detail}</td>
                    </tr>
                }).collect_view()}</tbody>
            </table>
            <Pager base=format!("/admin/audit{}", query(&[("action", &action()), ("actor", &actor())]))
                page=p.page per_page=p.per_page total=p.total />
        </Loaded>
    }
}
