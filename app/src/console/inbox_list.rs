//! `/admin/conversations`: the live list (issue 43): the inbox's views, and filters by agent,
//! status, team, label and the dates it started between; every filter lives in the address (a
//! link or a reload keeps it) and the same filters export the list as CSV.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_navigate, use_query_map};

use super::api::agents::agent_names;
use super::api::conversations::conversations;
use super::api::inbox::{labels, teams};
use super::inbox_panel::{InboxViews, LabelChip};
use super::layout::console_ctx;
use super::lists::{AgentOptions, Badge, Pager, page_param, query, when};
use super::loaded::Loaded;
use super::types::ConversationItem;

const STATUSES: &[(&str, &str)] = &[
    ("", "Any status"),
    ("bot", "Bot"),
    ("waiting_human", "Waiting for human"),
    ("human", "Human"),
    ("closed", "Closed"),
];

/// The filters a list address holds, in this order.
const FILTERS: [&str; 8] = ["view", "agent", "status", "team", "label", "from", "to", "user"];

/// How a list or a transcript names the visitor: the name operators gave the contact, the
/// website's user when identified, else the end of the visitor's id.
pub fn who(c: &ConversationItem) -> String {
    if let Some(name) = c.contact_name.as_ref().filter(|n| !n.trim().is_empty()) {
        return name.clone();
    }
    match &c.user {
        Some(u) => u.display(),
        None => format!("Visitor …{}", c.visitor),
    }
}

/// `/admin/conversations?view=&agent=&status=&team=&label=&from=&to=&user=&page=`.
#[component]
pub fn ConversationsPage() -> impl IntoView {
    let ctx = console_ctx();
    let q = use_query_map();
    let get = move |key: &str| q.read().get(key).unwrap_or_default();
    // Every filter as `(key, value)`, `change` replacing one (the page starts again at 1).
    let current = move |change: Option<(&str, String)>| -> Vec<(&'static str, String)> {
        FILTERS
            .iter()
            .map(|k| match &change {
                Some((key, value)) if key == k => (*k, value.clone()),
                _ => (*k, get(k)),
            })
            .collect()
    };
    let address = move |path: &str, pairs: Vec<(&'static str, String)>| {
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        format!("{path}{}", query(&refs))
    };
    let page = move || page_param(&q.read());
    let list = Resource::new(
        move || (ctx.changes.get(), current(None), page()),
        |(_, f, page)| {
            let v = |i: usize| Some(f[i].1.clone());
            conversations(v(1), v(2), page, v(7), v(0), v(3), v(4), v(5), v(6))
        },
    );
    let names = Resource::new(|| (), |_| agent_names());
    let team_list = Resource::new(|| (), |_| teams());
    let label_list = Resource::new(|| (), |_| labels());
    let navigate = use_navigate();
    let set = move |key: &'static str, value: String| {
        navigate(&address("/admin/conversations", current(Some((key, value)))), Default::default());
    };
    let (set2, set3, set4, set5, set6) = (set.clone(), set.clone(), set.clone(), set.clone(), set.clone());
    view! {
        <h1>"Conversations"</h1>
        <InboxViews current=Signal::derive(move || get("view")) />
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <label for="f-agent">"Agent"</label>
            <select id="f-agent" on:change=move |ev| set("agent", event_target_value(&ev))>
                <option value="" selected=move || get("agent").is_empty()>"All agents"</option>
                <AgentOptions names selected=Signal::derive(move || get("agent")) />
            </select>
            <label for="f-status">"Status"</label>
            <select id="f-status" on:change=move |ev| set2("status", event_target_value(&ev))>
                {STATUSES.iter().map(|(v, label)| view! { <option value=*v selected=move || get("status") == *v>{*label}</option> }).collect_view()}
            </select>
            <label for="f-team">"Team"</label>
            <select id="f-team" on:change=move |ev| set3("team", event_target_value(&ev))>
                <option value="">"Any team"</option>
                <Transition>
                    {move || team_list.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|t| {
                        let id = t.id.clone();
                        view! { <option value=t.id selected=move || get("team") == id>{t.name}</option> }
                    }).collect_view()}
                </Transition>
            </select>
            <label for="f-label">"Label"</label>
            <select id="f-label" on:change=move |ev| set4("label", event_target_value(&ev))>
                <option value="">"Any label"</option>
                <Transition>
                    {move || label_list.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|l| {
                        let id = l.id.clone();
                        view! { <option value=l.id selected=move || get("label") == id>{l.name}</option> }
                    }).collect_view()}
                </Transition>
            </select>
            <label for="f-from">"Started from"</label>
            <input id="f-from" type="date" prop:value=move || get("from") on:change=move |ev| set5("from", event_target_value(&ev)) />
            <label for="f-to">"to"</label>
            <input id="f-to" type="date" prop:value=move || get("to") on:change=move |ev| set6("to", event_target_value(&ev)) />
            <a class="c-button" download="conversations.csv"
                href=move || address("/admin/conversations.csv", current(None))>"Export CSV"</a>
            <span class="c-live" title="The list updates by itself">"● live"</span>
        </form>
        {move || (!get("user").is_empty()).then(|| view! {
            <p class="c-hint" id="user-filter">
                {format!("Only the conversations of the website's user {} · ", get("user"))}
                <A href=address("/admin/conversations", current(Some(("user", String::new()))))>"show everyone's"</A>
            </p>
        })}
        <Loaded resource=list let:p>
            <div class="c-scroll">
                <table class="c-table" id="conversations">
                    <thead><tr><th>"Visitor"</th><th>"Agent"</th><th>"Status"</th><th>"Last message"</th><th>"Messages"</th><th>"Updated (UTC)"</th></tr></thead>
                    <tbody>
                        {p.items.into_iter().map(|c| view! { <Row c /> }).collect_view()}
                    </tbody>
                </table>
            </div>
            <Pager base=address("/admin/conversations", current(None)) page=p.page per_page=p.per_page total=p.total />
        </Loaded>
    }
}

#[component]
fn Row(c: ConversationItem) -> impl IntoView {
    let href = format!("/admin/conversations/{}", c.id);
    let holder = c.claimed_by.clone().map(|n| format!(" · {n}"));
    let name = who(&c);
    view! {
        <tr data-id=c.id.clone()>
            <td><A href=href>{name}</A></td>
            <td>{c.agent_name}</td>
            <td>
                <Badge status=c.status />{holder}{c.lead_submitted.then_some(" · lead")}
                {c.assignee.map(|a| format!(" · assigned to {a}"))}
                {c.labels.into_iter().map(|label| view! { " " <LabelChip label /> }).collect_view()}
            </td>
            <td class="c-clip">{c.last_message}</td>
            <td>{c.messages}</td>
            <td>{when(c.updated_at)}</td>
        </tr>
    }
}
