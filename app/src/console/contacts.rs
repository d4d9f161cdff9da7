//! `/admin/contacts` and `/admin/contacts/:id` (issue 43, part 5): the people the agents talked
//! with, found by name, email, phone or id; one contact's details (operators may change name,
//! email and phone), what the website and its browsers said, and every conversation, lead,
//! order, rating and memory; merging another contact into this one, and separating it again.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::api::contacts::{contact, contacts, merge_contacts, save_contact, separate_contact};
use super::fields::ErrorLine;
use super::layout::confirm;
use super::lists::{Badge, Pager, page_param, query, when};
use super::loaded::Loaded;
use super::types::{ContactDetail, ContactItem};

/// `/admin/contacts?q=…&page=…`.
#[component]
pub fn ContactsPage() -> impl IntoView {
    let q = use_query_map();
    let text = move || q.read().get("q").unwrap_or_default();
    let page = move || page_param(&q.read());
    let list = Resource::new(move || (text(), page()), |(text, page)| contacts(Some(text), None, page));
    view! {
        <h1>"Contacts"</h1>
        <form class="c-filters" role="search" method="get" action="/admin/contacts">
            <label for="ct-q">"Name, email, phone or id"</label>
            <input id="ct-q" name="q" type="search" maxlength="200" prop:value=text />
            <button type="submit">"Find"</button>
        </form>
        <Loaded resource=list let:p>
            <p role="status" class="c-hint">{format!("{} contact{}", p.total, if p.total == 1 { "" } else { "s" })}</p>
            <div class="c-scroll">
                <table class="c-table" id="contacts">
                    <thead><tr><th>"Name"</th><th>"Email"</th><th>"Phone"</th><th>"Agent"</th><th>"Conversations"</th><th>"Last seen"</th></tr></thead>
                    <tbody>
                        {p.items.into_iter().map(|c| view! { <ContactLine c /> }).collect_view()}
                    </tbody>
                </table>
            </div>
            <Pager base=format!("/admin/contacts{}", query(&[("q", &text())])) page=p.page per_page=p.per_page total=p.total />
        </Loaded>
    }
}

#[component]
fn ContactLine(c: ContactItem) -> impl IntoView {
    view! {
        <tr>
            <td><A href=format!("/admin/contacts/{}", c.id)>{c.name}</A></td>
            <td>{c.email.unwrap_or_default()}</td>
            <td>{c.phone.unwrap_or_default()}</td>
            <td>{c.agent_name}</td>
            <td>{c.conversations}</td>
            <td>{when(c.last_seen_at)}</td>
        </tr>
    }
}

/// `/admin/contacts/:id` (any visitor row of the contact: a merged one leads to its contact).
#[component]
pub fn ContactPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let version = RwSignal::new(0u64);
    let detail = Resource::new(move || (id(), version.get()), |(id, _)| contact(id));
    view! {
        <p><A href="/admin/contacts">"← Contacts"</A></p>
        <Loaded resource=detail let:d>
            <ContactView d version />
        </Loaded>
    }
}

#[component]
fn ContactView(d: ContactDetail, version: RwSignal<u64>) -> impl IntoView {
    let seen = format!(
        "{} · first seen {} · last seen {}",
        d.item.agent_name,
        when(d.first_seen_at),
        when(d.item.last_seen_at)
    );
    let website = d.item.user_id.clone().map(|uid| {
        let who = [d.user_name.clone(), d.user_email.clone()].into_iter().flatten().collect::<Vec<_>>().join(" · ");
        view! { <p id="contact-user">{format!("Signed in on the website as user id {uid}")}{(!who.is_empty()).then(|| format!(" ({who})"))}</p> }
    });
    view! {
        <h1 id="contact-name">{d.item.name.clone()}</h1>
        <p class="c-hint">{seen}</p>
        <DetailsForm d=d.clone() version />
        <section class="c-card" aria-labelledby="ct-site">
            <h2 id="ct-site">"From the website"</h2>
            {website}
            {if d.attributes.is_empty() {
                view! { <p class="c-hint">"The page set no attributes (Parley.setContext)."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table" id="contact-attributes">
                        <thead><tr><th>"Attribute"</th><th>"Value"</th></tr></thead>
                        <tbody>{d.attributes.clone().into_iter().map(|(k, v)| view! { <tr><td>{k}</td><td>{v}</td></tr> }).collect_view()}</tbody>
                    </table>
                }.into_any()
            }}
            <h3 id="ct-browsers">"Browsers"</h3>
            // Focusable: a table that scrolls sideways must be reachable by keyboard.
            <div class="c-scroll" tabindex="0" role="region" aria-labelledby="ct-browsers">
                <table class="c-table" id="contact-browsers">
                    <thead><tr><th>"Browser"</th><th>"Language"</th><th>"Country"</th><th>"Site"</th><th>"First seen"</th><th>"Last seen"</th></tr></thead>
                    <tbody>
                        {d.browsers.clone().into_iter().map(|b| view! {
                            <tr>
                                <td title=b.user_agent.clone().unwrap_or_default()>{b.label}{b.signed_out.then_some(" (signed out)")}</td>
                                <td>{b.language.unwrap_or_default()}</td>
                                <td>{b.country.unwrap_or_default()}</td>
                                <td>{b.site.unwrap_or_default()}</td>
                                <td>{when(b.first_seen_at)}</td>
                                <td>{when(b.last_seen_at)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        </section>
        <History d=d.clone() />
        <Merged d=d.clone() version />
        <MergeForm d version />
    }
}

/// Name, email and phone as operators set them; what the website and the form said as hints.
#[component]
fn DetailsForm(d: ContactDetail, version: RwSignal<u64>) -> impl IntoView {
    let name = RwSignal::new(d.contact_name.clone());
    let email = RwSignal::new(d.contact_email.clone());
    let phone = RwSignal::new(d.contact_phone.clone());
    let error = RwSignal::new(None::<String>);
    let saved = RwSignal::new(false);
    let id = d.item.id.clone();
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        saved.set(false);
        let (id, n, e, p) = (id.clone(), name.get_untracked(), email.get_untracked(), phone.get_untracked());
        leptos::task::spawn_local(async move {
            match save_contact(id, n, e, p).await {
                Ok(()) => {
                    saved.set(true);
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    let hint = |a: &Option<String>, b: &Option<String>| a.clone().or_else(|| b.clone()).unwrap_or_default();
    view! {
        <form class="c-card" id="contact-form" on:submit=save>
            <h2>"Details"</h2>
            <p class="c-hint">"What you set here is shown before what the website or a contact form said (shown greyed when empty)."</p>
            <label for="ct-name">"Name"</label>
            <input id="ct-name" maxlength="120" autocomplete="off" placeholder=hint(&d.user_name, &d.lead_name)
                prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) />
            <label for="ct-email">"Email"</label>
            <input id="ct-email" type="email" maxlength="254" autocomplete="off" placeholder=hint(&d.user_email, &d.lead_email)
                prop:value=email on:input=move |ev| email.set(event_target_value(&ev)) />
            <label for="ct-phone">"Phone"</label>
            <input id="ct-phone" type="tel" maxlength="40" autocomplete="off" placeholder=d.lead_phone.clone().unwrap_or_default()
                prop:value=phone on:input=move |ev| phone.set(event_target_value(&ev)) />
            <button type="submit" class="c-primary">"Save details"</button>
            <Show when=move || saved.get()><p role="status">"Saved."</p></Show>
            <ErrorLine error />
        </form>
    }
}

/// Conversations, leads, orders, ratings and memories.
#[component]
fn History(d: ContactDetail) -> impl IntoView {
    view! {
        <section class="c-card" aria-labelledby="ct-conv">
            <h2 id="ct-conv">{format!("Conversations ({})", d.conversations.len())}</h2>
            <div class="c-scroll">
                <table class="c-table" id="contact-conversations">
                    <thead><tr><th>"Last message"</th><th>"Status"</th><th>"Messages"</th><th>"Rating"</th><th>"Updated"</th></tr></thead>
                    <tbody>
                        {d.conversations.into_iter().map(|c| view! {
                            <tr>
                                <td><A href=format!("/admin/conversations/{}", c.id)>{if c.last_message.is_empty() { "(no text)".to_owned() } else { c.last_message }}</A></td>
                                <td><Badge status=c.status /></td>
                                <td>{c.messages}</td>
                                <td>{c.rating.map(|r| format!("{r} of 5")).unwrap_or_default()}</td>
                                <td>{when(c.updated_at)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
            {(!d.leads.is_empty()).then(|| view! {
                <h3>"Leads"</h3>
                <ul id="contact-leads">
                    {d.leads.into_iter().map(|l| {
                        let reach = [l.email, l.phone].into_iter().flatten().collect::<Vec<_>>().join(" · ");
                        view! { <li>{format!("{} · {} · {} · {}", when(l.created_at), l.name, reach, l.status)}<br />{l.message}</li> }
                    }).collect_view()}
                </ul>
            })}
            {(!d.orders.is_empty()).then(|| view! {
                <h3>"Orders"</h3>
                <ul id="contact-orders">
                    {d.orders.into_iter().map(|o| view! { <li>{format!("{} · {} · {} · {}", when(o.created_at), o.service, o.amount, o.status)}</li> }).collect_view()}
                </ul>
            })}
            {(!d.ratings.is_empty()).then(|| view! {
                <h3>"Ratings"</h3>
                <ul id="contact-ratings">
                    {d.ratings.into_iter().map(|r| view! { <li>{format!("{} · {}", when(r.updated_at), r.what)}{r.comment.map(|c| format!(": “{c}”"))}</li> }).collect_view()}
                </ul>
            })}
            {(!d.memories.is_empty()).then(|| view! {
                <h3>"What the agent remembers"</h3>
                <ul id="contact-memories">
                    {d.memories.into_iter().map(|(text, category)| view! { <li>{category.map(|c| format!("{c}: ")).unwrap_or_default()}{text}</li> }).collect_view()}
                </ul>
            })}
        </section>
    }
}

/// The contacts merged into this one, each of which can be separated again.
#[component]
fn Merged(d: ContactDetail, version: RwSignal<u64>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let into = d.item.id.clone();
    (!d.merged.is_empty()).then(|| {
        view! {
            <section class="c-card" aria-labelledby="ct-merged">
                <h2 id="ct-merged">"Merged into this contact"</h2>
                <ul id="contact-merged">
                    {d.merged.into_iter().map(|m| {
                        let (into, from) = (into.clone(), m.id.clone());
                        let separate = move |_| {
                            if !confirm("Separate this contact again? Its conversations leave this page.") {
                                return;
                            }
                            let (into, from) = (into.clone(), from.clone());
                            leptos::task::spawn_local(async move {
                                match separate_contact(into, from).await {
                                    Ok(()) => version.update(|v| *v += 1),
                                    Err(e) => error.set(Some(e.to_string())),
                                }
                            });
                        };
                        view! {
                            <li>
                                {format!("{} ({} conversations) ", m.name, m.conversations)}
                                <button type="button" on:click=separate>"Separate"</button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
                <ErrorLine error />
            </section>
        }
    })
}

/// Finds another contact of the same agent and merges it into this one.
#[component]
fn MergeForm(d: ContactDetail, version: RwSignal<u64>) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let asked = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let (into, agent) = (d.item.id.clone(), d.agent_id.clone());
    let found = Resource::new(
        move || asked.get(),
        move |q| {
            let agent = agent.clone();
            async move {
                match q {
                    Some(q) => contacts(Some(q), Some(agent), 1).await.map(|p| p.items),
                    None => Ok(Vec::new()),
                }
            }
        },
    );
    let find = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        asked.set(Some(text.get_untracked()).filter(|t| !t.trim().is_empty()));
    };
    view! {
        <form class="c-card" id="merge-form" on:submit=find>
            <h2>"Merge another contact into this one"</h2>
            <p class="c-hint">"Their conversations, leads, orders, ratings and memories then show here; each browser still sees only its own conversations. A signed-in user of the website can only take others in."</p>
            <label for="ct-merge-q">"Name, email, phone or id of the other contact"</label>
            <input id="ct-merge-q" type="search" maxlength="200" prop:value=text on:input=move |ev| text.set(event_target_value(&ev)) />
            <button type="submit">"Find"</button>
            <Loaded resource=found let:items>
                <ul id="merge-candidates">
                    {items.into_iter().filter(|c| c.id != into).map(|c| {
                        let (into, from) = (into.clone(), c.id.clone());
                        let label = format!("{} · {} · {} conversations", c.name, c.email.clone().unwrap_or_default(), c.conversations);
                        let merge = move |_| {
                            if !confirm("Merge this contact into the one on this page?") {
                                return;
                            }
                            let (into, from) = (into.clone(), from.clone());
                            leptos::task::spawn_local(async move {
                                match merge_contacts(into, from).await {
                                    Ok(()) => {
                                        asked.set(None);
                                        version.update(|v| *v += 1);
                                    }
                                    Err(e) => error.set(Some(e.to_string())),
                                }
                            });
                        };
                        view! { <li>{label}" "<button type="button" on:click=merge>"Merge into this contact"</button></li> }
                    }).collect_view()}
                </ul>
            </Loaded>
            <ErrorLine error />
        </form>
    }
}
