//! `/admin/webhooks`: an agent's outbound webhooks — endpoints added here (the signing secret
//! shown once), turned on and off (Parley turns off one that failed for a day, and says so), and
//! the log of what was sent, with "Send again".

use leptos::prelude::*;

use super::api::webhooks::{add_webhook, agent_webhooks, delete_webhook, resend_webhook, set_webhook_enabled};
use super::fields::{CheckItem, CheckList, ErrorLine, tick};
use super::lists::{AgentChoice, when};
use super::types::{EndpointItem, NewEndpoint, WEBHOOK_EVENTS, WebhooksView};

/// `/admin/webhooks`: choose an agent, then its endpoints.
#[component]
pub fn WebhooksPage() -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let version = RwSignal::new(0u64);
    let view_of = Resource::new(
        move || (agent.get(), version.get()),
        |(agent, _)| async move { if agent.is_empty() { Ok(None) } else { agent_webhooks(agent).await.map(Some) } },
    );
    let created = RwSignal::new(None::<NewEndpoint>);
    view! {
        <h1>"Webhooks"</h1>
        <p class="c-hint">
            "Parley tells your other systems what happens: each endpoint receives a signed "<code>"POST"</code>
            " (Standard Webhooks: the headers webhook-id, webhook-timestamp and webhook-signature) for the events it chose. Failed deliveries are tried again for about a day."
        </p>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <AgentChoice id="w-agent" agent />
        </form>
        {move || created.get().map(|e| view! {
            <section class="c-card c-new-token" role="status">
                <h2>"Signing secret — copy it now, it is not shown again"</h2>
                <pre id="new-webhook-secret">{e.secret.clone()}</pre>
                <p class="c-hint">{format!("Verify every call to {} with it: HMAC-SHA256 of \"{{webhook-id}}.{{webhook-timestamp}}.{{body}}\", base64, after \"v1,\" in webhook-signature.", e.url)}</p>
            </section>
        })}
        <Suspense fallback=|| view! { <p class="c-hint">"Loading…"</p> }>
            {move || view_of.get().map(|r| match r {
                Ok(Some(v)) => view! { <WebhooksDetail v version created /> }.into_any(),
                Ok(None) => view! { <p class="c-hint">"Choose an agent."</p> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </Suspense>
    }
}

#[component]
fn WebhooksDetail(v: WebhooksView, version: RwSignal<u64>, created: RwSignal<Option<NewEndpoint>>) -> impl IntoView {
    let agent_id = StoredValue::new(v.agent_id.clone());
    let url = RwSignal::new(String::new());
    let chosen = RwSignal::new(Vec::<String>::new());
    let error = RwSignal::new(None::<String>);
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            let events = chosen.get_untracked().join(",");
            match add_webhook(agent_id.get_value(), url.get_untracked(), events).await {
                Ok(made) => {
                    error.set(None);
                    url.set(String::new());
                    chosen.set(Vec::new());
                    created.set(Some(made));
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    let hint = if v.allow_private {
        "This server allows http and private addresses (PARLEY_ALLOW_PRIVATE_ENDPOINTS)."
    } else {
        "A public https address; private and loopback addresses are refused."
    };
    let empty = v.endpoints.is_empty();
    view! {
        <form class="c-card c-form" id="webhook-add" on:submit=add>
            <h2>"Add an endpoint"</h2>
            <label for="w-url">"Address"</label>
            <input id="w-url" type="url" placeholder="https://example.com/parley-events" prop:value=url
                on:input=move |ev| url.set(event_target_value(&ev)) />
            <p class="c-hint">{hint}</p>
            <fieldset>
                <legend>"Events"</legend>
                <CheckList prefix="w-event-" code=true chosen
                    items=WEBHOOK_EVENTS.iter().map(|(name, meaning)| CheckItem {
                        name: (*name).to_owned(), label: None, title: Some((*meaning).to_owned()),
                    }).collect()
                    toggle=Callback::new(move |(name, on): (String, bool)| chosen.update(|c| tick(c, &name, on))) />
            </fieldset>
            <ErrorLine error />
            <button type="submit" class="c-primary">"Add endpoint"</button>
        </form>
        <Show when=move || empty>
            <p class="c-hint">"No endpoints yet."</p>
        </Show>
        {v.endpoints.into_iter().map(|e| view! { <EndpointCard e version error /> }).collect_view()}
    }
}

#[component]
fn EndpointCard(e: EndpointItem, version: RwSignal<u64>, error: RwSignal<Option<String>>) -> impl IntoView {
    let id = StoredValue::new(e.id.clone());
    let enabled = e.enabled;
    let toggle = move |_| {
        leptos::task::spawn_local(async move {
            match set_webhook_enabled(id.get_value(), !enabled).await {
                Ok(()) => version.update(|v| *v += 1),
                Err(err) => error.set(Some(err.to_string())),
            }
        });
    };
    let url_text = e.url.clone();
    let remove = move |_| {
        if !super::layout::confirm(&format!("Delete the endpoint {url_text} and its delivery log?")) {
            return;
        }
        leptos::task::spawn_local(async move {
            match delete_webhook(id.get_value()).await {
                Ok(()) => version.update(|v| *v += 1),
                Err(err) => error.set(Some(err.to_string())),
            }
        });
    };
    let state = match (e.enabled, &e.disabled_reason) {
        (true, _) => "On".to_owned(),
        (false, Some(reason)) => {
            format!("Turned off by Parley: {reason}. Fix the endpoint, then turn it on: what waits for it goes out.")
        }
        (false, None) => "Off".to_owned(),
    };
    let last_success = e.last_success_at.map_or("never".to_owned(), when);
    view! {
        <section class="c-card c-webhook" class:c-revoked=!e.enabled data-endpoint=e.id.clone()>
            <h2><code>{e.url.clone()}</code></h2>
            <p>{format!("Events: {}", e.events.join(", "))}</p>
            <p>{format!("Secret {}… · last delivered {} · added {}", e.prefix, last_success, when(e.created_at))}</p>
            <p class="c-endpoint-state" role=if e.enabled { "note" } else { "alert" }>{state}</p>
            <button type="button" on:click=toggle>{if e.enabled { "Turn off" } else { "Turn on" }}</button>
            " "
            <button type="button" class="c-danger" on:click=remove>"Delete"</button>
            <h3>"Deliveries"</h3>
            <table class="c-table c-deliveries">
                <thead><tr><th>"Created (UTC)"</th><th>"Event"</th><th>"State"</th><th>"Attempts"</th><th>"Last answer"</th><th>"Body"</th><th></th></tr></thead>
                <tbody>{e.deliveries.into_iter().map(|d| {
                    let delivery = StoredValue::new(d.id.clone());
                    let again = move |_| {
                        leptos::task::spawn_local(async move {
                            match resend_webhook(delivery.get_value()).await {
                                Ok(()) => version.update(|v| *v += 1),
                                Err(err) => error.set(Some(err.to_string())),
                            }
                        });
                    };
                    let state = match d.status.as_str() {
                        "pending" if d.attempts > 0 => format!("retrying at {}", when(d.next_attempt_at)),
                        other => other.to_owned(),
                    };
                    let answer = match (d.last_status, &d.last_error) {
                        (Some(code), _) => code.to_string(),
                        (None, Some(err)) => err.clone(),
                        (None, None) => "—".to_owned(),
                    };
                    view! {
                        <tr data-delivery=d.id.clone() data-status=d.status.clone()>
                            <td>{when(d.created_at)}</td>
                            <td><code>{d.event.clone()}</code></td>
                            <td>{state}</td>
                            <td>{d.attempts}</td>
                            <td>{answer}</td>
                            <td><details><summary>"JSON"</summary><pre>{d.payload.clone()}</pre></details></td>
                            <td><button type="button" on:click=again>"Send again"</button></td>
                        </tr>
                    }
                }).collect_view()}</tbody>
            </table>
            <h3>"Attempts"</h3>
            <table class="c-table c-attempts">
                <thead><tr><th>"Time (UTC)"</th><th>"Delivery"</th><th>"Answer"</th><th>"Took"</th></tr></thead>
                <tbody>{e.attempts.into_iter().map(|a| {
                    let answer = match (a.status, a.error) {
                        (Some(code), _) => code.to_string(),
                        (None, Some(err)) => err,
                        (None, None) => "—".to_owned(),
                    };
                    view! {
                        <tr>
                            <td>{when(a.at)}</td>
                            <td><code>{a.delivery_id.chars().take(16).collect::<String>()}</code></td>
                            <td>{answer}</td>
                            <td>{format!("{} ms", a.duration_ms)}</td>
                        </tr>
                    }
                }).collect_view()}</tbody>
            </table>
        </section>
    }
}
