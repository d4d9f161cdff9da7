//! `/admin/leads`, `/admin/orders` and `/admin/account`.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_query_map;

use super::api::auth::change_password;
use super::api::leads::{leads, update_lead};
use super::api::orders::orders;
use super::error::ConsoleError;
use super::layout::console_ctx;
use super::lists::{Badge, Pager, StatusFilter, page_param, query, when};
use super::loaded::Loaded;
use super::types::{LeadItem, Page};

/// A list filtered by `?status=` a page at a time, reloaded on every change: the status and the
/// page as loaded.
fn by_status<T, Fut>(fetch: fn(Option<String>, i64) -> Fut) -> (Signal<String>, Resource<Result<Page<T>, ConsoleError>>)
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    Fut: Future<Output = Result<Page<T>, ConsoleError>> + Send + 'static,
{
    let ctx = console_ctx();
    let q = use_query_map();
    let status = Signal::derive(move || q.read().get("status").unwrap_or_default());
    let page = move || page_param(&q.read());
    let list = Resource::new(move || (ctx.changes.get(), status.get(), page()), move |(_, s, p)| fetch(Some(s), p));
    (status, list)
}

/// `/admin/leads`: leads by status, with notes and a CSV export.
#[component]
pub fn LeadsPage() -> impl IntoView {
    let (status, list) = by_status(leads);
    let base = move || format!("/admin/leads{}", query(&[("status", &status.get())]));
    view! {
        <h1>"Leads"</h1>
        <StatusFilter path="/admin/leads" id="l-status" status
            options=&[("", "Any"), ("new", "New"), ("contacted", "Contacted"), ("closed", "Closed")]>
            <a class="c-button" href=move || format!("/admin/leads.csv{}", query(&[("status", &status.get())])) download="leads.csv">"Export CSV"</a>
        </StatusFilter>
        <Loaded resource=list let:p>
            <table class="c-table" id="leads">
                <thead><tr><th>"Name"</th><th>"Contact"</th><th>"Message"</th><th>"Received (UTC)"</th><th>"Status and notes"</th></tr></thead>
                <tbody>{p.items.into_iter().map(|lead| view! { <LeadRow lead /> }).collect_view()}</tbody>
            </table>
            <Pager base=base() page=p.page per_page=p.per_page total=p.total />
        </Loaded>
    }
}

#[component]
fn LeadRow(lead: LeadItem) -> impl IntoView {
    let id = StoredValue::new(lead.id.clone());
    let status = RwSignal::new(lead.status.clone());
    let notes = RwSignal::new(lead.notes.clone());
    let saved = RwSignal::new(None::<String>);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            match update_lead(id.get_value(), status.get_untracked(), notes.get_untracked()).await {
                Ok(()) => saved.set(Some("Saved.".into())),
                Err(e) => saved.set(Some(e.to_string())),
            }
        });
    };
    let sel = format!("lead-status-{}", lead.id);
    let note = format!("lead-notes-{}", lead.id);
    let contact = [lead.email.clone(), lead.phone.clone()].into_iter().flatten().collect::<Vec<_>>().join(" · ");
    view! {
        <tr>
            <td>{lead.name}<br /><A href=format!("/admin/conversations/{}", lead.conversation_id)>"conversation"</A></td>
            <td>{contact}</td>
            <td class="c-clip">{lead.message}</td>
            <td>{when(lead.created_at)}</td>
            <td>
                <form class="c-inline" on:submit=save>
                    <label for=sel.clone() class="c-sr">"Status"</label>
                    <select id=sel on:change=move |ev| status.set(event_target_value(&ev))>
                        {["new", "contacted", "closed"].into_iter().map(|v| view! { <option value=v selected=move || status.get() == v>{v}</option> }).collect_view()}
                    </select>
                    <label for=note.clone() class="c-sr">"Notes"</label>
                    <input id=note placeholder="Notes" prop:value=notes on:input=move |ev| notes.set(event_target_value(&ev)) />
                    <button type="submit">"Save"</button>
                    {move || saved.get().map(|s| view! { <span class="c-hint" role="status">{s}</span> })}
                </form>
            </td>
        </tr>
    }
}

/// `/admin/orders`: payment orders by status.
#[component]
pub fn OrdersPage() -> impl IntoView {
    let (status, list) = by_status(orders);
    let base = move || format!("/admin/orders{}", query(&[("status", &status.get())]));
    view! {
        <h1>"Orders"</h1>
        <StatusFilter path="/admin/orders" id="o-status" status
            options=&[("", "Any"), ("pending", "Pending"), ("paid", "Paid"), ("expired", "Expired")] />
        <Loaded resource=list let:p>
            <table class="c-table" id="orders">
                <thead><tr><th>"Order"</th><th>"Service"</th><th>"Amount"</th><th>"Method"</th><th>"Status"</th><th>"Created (UTC)"</th><th>"Facts"</th><th>"Conversation"</th></tr></thead>
                <tbody>
                    {p.items.into_iter().map(|o| view! {
                        <tr>
                            <td><code>{o.id.chars().take(8).collect::<String>()}</code></td>
                            <td>{format!("Assessment · {}", o.category)}</td>
                            <td>{o.amount}</td>
                            <td>{o.method}</td>
                            <td><Badge status=o.status /></td>
                            <td>{when(o.created_at)}</td>
                            <td class="c-facts">{if o.facts.is_empty() {
                                view! { <span class="c-hint">"none collected"</span> }.into_any()
                            } else {
                                view! { <ul>{o.facts.into_iter().map(|f| view! { <li>{f}</li> }).collect_view()}</ul> }.into_any()
                            }}</td>
                            <td><A href=format!("/admin/conversations/{}", o.conversation_id)>"open"</A></td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <Pager base=base() page=p.page per_page=p.per_page total=p.total />
        </Loaded>
    }
}

/// `/admin/account`: who is signed in, and a new password.
#[component]
pub fn AccountPage() -> impl IntoView {
    let me = console_ctx().me.get_value();
    let current = RwSignal::new(String::new());
    let new = RwSignal::new(String::new());
    let outcome = RwSignal::new(None::<Result<(), String>>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            let r = change_password(current.get_untracked(), new.get_untracked()).await.map_err(|e| e.to_string());
            if r.is_ok() {
                current.set(String::new());
                new.set(String::new());
            }
            outcome.set(Some(r));
        });
    };
    view! {
        <h1>"Account"</h1>
        <p>{format!("{} · {} · {}", me.name, me.email, me.role)}</p>
        <form class="c-card c-form" on:submit=submit>
            <h2>"Change password"</h2>
            <label for="pw-current">"Current password"</label>
            <input id="pw-current" type="password" autocomplete="current-password" prop:value=current on:input=move |ev| current.set(event_target_value(&ev)) />
            <label for="pw-new">"New password (10 characters or more)"</label>
            <input id="pw-new" type="password" autocomplete="new-password" minlength="10" prop:value=new on:input=move |ev| new.set(event_target_value(&ev)) />
            {move || outcome.get().map(|r| match r {
                Ok(()) => view! { <p role="status">"Password changed."</p> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e}</p> }.into_any(),
            })}
            <button type="submit" class="c-primary">"Change password"</button>
        </form>
        <super::hours::MailMe />
    }
}
