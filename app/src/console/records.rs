//! `/admin/leads`, `/admin/orders` and `/admin/account`.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_navigate, use_query_map};

use super::api::auth::change_password;
use super::api::leads::{leads, update_lead};
use super::api::orders::orders;
use super::layout::console_ctx;
use super::lists::{Badge, Failure, Pager, page_param, query, when};
use super::types::LeadItem;

#[component]
pub fn LeadsPage() -> impl IntoView {
    let ctx = console_ctx();
    let q = use_query_map();
    let status = move || q.read().get("status").unwrap_or_default();
    let page = move || page_param(&q.read());
    let list =
        Resource::new(move || (ctx.changes.get(), status(), page()), |(_, status, page)| leads(Some(status), page));
    let navigate = use_navigate();
    view! {
        <h1>"Leads"</h1>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <label for="l-status">"Status"</label>
            <select id="l-status" on:change=move |ev| navigate(&format!("/admin/leads{}", query(&[("status", &event_target_value(&ev))])), Default::default())>
                {[("", "Any"), ("new", "New"), ("contacted", "Contacted"), ("closed", "Closed")].into_iter()
                    .map(|(v, l)| view! { <option value=v selected=move || status() == v>{l}</option> }).collect_view()}
            </select>
            <a class="c-button" href=move || format!("/admin/leads.csv{}", query(&[("status", &status())])) download="leads.csv">"Export CSV"</a>
        </form>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(p) => {
                        let pages = p.pages();
                        view! {
                            <table class="c-table" id="leads">
                                <thead><tr><th>"Name"</th><th>"Contact"</th><th>"Message"</th><th>"Received (UTC)"</th><th>"Status and notes"</th></tr></thead>
                                <tbody>{p.items.into_iter().map(|lead| view! { <LeadRow lead /> }).collect_view()}</tbody>
                            </table>
                            <Pager base=format!("/admin/leads{}", query(&[("status", &status())])) page=p.page pages total=p.total />
                        }.into_any()
                    }
                    Err(error) => view! { <Failure error /> }.into_any(),
                }
            })}
        </Transition>
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

#[component]
pub fn OrdersPage() -> impl IntoView {
    let ctx = console_ctx();
    let q = use_query_map();
    let status = move || q.read().get("status").unwrap_or_default();
    let page = move || page_param(&q.read());
    let list =
        Resource::new(move || (ctx.changes.get(), status(), page()), |(_, status, page)| orders(Some(status), page));
    let navigate = use_navigate();
    view! {
        <h1>"Orders"</h1>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <label for="o-status">"Status"</label>
            <select id="o-status" on:change=move |ev| navigate(&format!("/admin/orders{}", query(&[("status", &event_target_value(&ev))])), Default::default())>
                {[("", "Any"), ("pending", "Pending"), ("paid", "Paid"), ("expired", "Expired")].into_iter()
                    .map(|(v, l)| view! { <option value=v selected=move || status() == v>{l}</option> }).collect_view()}
            </select>
        </form>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(p) => {
                        let pages = p.pages();
                        view! {
                            <table class="c-table" id="orders">
                                <thead><tr><th>"Order"</th><th>"Service"</th><th>"Amount"</th><th>"Method"</th><th>"Status"</th><th>"Created (UTC)"</th><th>"Conversation"</th></tr></thead>
                                <tbody>
                                    {p.items.into_iter().map(|o| view! {
                                        <tr>
                                            <td><code>{o.id.chars().take(8).collect::<String>()}</code></td>
                                            <td>{format!("Assessment · {}", o.category)}</td>
                                            <td>{o.amount}</td>
                                            <td>{o.method}</td>
                                            <td><Badge status=o.status /></td>
                                            <td>{when(o.created_at)}</td>
                                            <td><A href=format!("/admin/conversations/{}", o.conversation_id)>"open"</A></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            <Pager base=format!("/admin/orders{}", query(&[("status", &status())])) page=p.page pages total=p.total />
                        }.into_any()
                    }
                    Err(error) => view! { <Failure error /> }.into_any(),
                }
            })}
        </Transition>
    }
}

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
    }
}
