//! `/admin/notifications`: the signed-in user's unread notifications (links to the
//! conversations, "mark all read"), what they want to be told of and how (issue 43), desktop
//! notifications (asked only when they press the button) and Web Push for this browser.

use leptos::prelude::*;

use super::api::notify::{mark_notifications_read, notifications_page, save_notification_prefs};
use super::fields::{CheckItem, CheckList, ErrorLine, tick};
use super::layout::console_ctx;
use super::loaded::Loaded;
use super::types::{NOTIFY_KINDS, NotifyPage};

fn kind_text(kind: &str) -> &'static str {
    match kind {
        "assigned" => "Assigned to you",
        "mention" => "You were mentioned in a note",
        "queue" => "New in the unassigned queue",
        "reply" => "The visitor wrote",
        _ => "Notification",
    }
}

#[component]
pub fn NotificationsPage() -> impl IntoView {
    let ctx = console_ctx();
    let version = RwSignal::new(0u64);
    let page = Resource::new(move || (ctx.changes.get(), version.get()), |_| notifications_page());
    view! {
        <h1>"Notifications"</h1>
        <Loaded resource=page let:p>
            <Unread p=p.clone() version />
            <Prefs p=p.clone() />
            <ThisBrowser p />
        </Loaded>
    }
}

#[component]
fn Unread(p: NotifyPage, version: RwSignal<u64>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let all_read = move |_| {
        leptos::task::spawn_local(async move {
            match mark_notifications_read(String::new()).await {
                Ok(_) => version.update(|v| *v += 1),
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    let empty = p.unread.is_empty();
    view! {
        <section class="c-card" aria-labelledby="n-unread">
            <h2 id="n-unread">{format!("Unread ({})", p.unread.len())}</h2>
            <Show when=move || empty><p class="c-hint">"Nothing unread."</p></Show>
            <ul class="c-list">
                {p.unread.into_iter().map(|n| {
                    let href = format!("/admin/conversations/{}", n.conversation_id);
                    let id = n.id.clone();
                    let open = move |_| {
                        let id = id.clone();
                        leptos::task::spawn_local(async move { let _ = mark_notifications_read(id).await; });
                    };
                    view! {
                        <li>
                            <a href=href on:click=open>{kind_text(&n.kind)}</a>
                            " · " <code>{n.conversation_id.chars().take(8).collect::<String>()}</code>
                        </li>
                    }
                }).collect_view()}
            </ul>
            <ErrorLine error />
            <button type="button" class="c-primary" disabled=empty on:click=all_read>"Mark all read"</button>
        </section>
    }
}

#[component]
fn Prefs(p: NotifyPage) -> impl IntoView {
    let kinds = RwSignal::new(p.kinds.clone());
    let in_console = RwSignal::new(p.in_console);
    let push = RwSignal::new(p.push);
    let digest = RwSignal::new(p.digest);
    let delay = RwSignal::new(p.digest_delay_min.to_string());
    let error = RwSignal::new(None::<String>);
    let saved = RwSignal::new(false);
    let mail_enabled = p.mail_enabled;
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let Ok(minutes) = delay.get_untracked().trim().parse::<i64>() else {
            error.set(Some("The digest's delay is a number of minutes.".into()));
            return;
        };
        leptos::task::spawn_local(async move {
            let done = save_notification_prefs(
                kinds.get_untracked().join(","),
                in_console.get_untracked(),
                push.get_untracked(),
                digest.get_untracked(),
                minutes,
            )
            .await;
            saved.set(done.is_ok());
            error.set(done.err().map(|e| e.to_string()));
        });
    };
    let check = |id: &'static str, label: &'static str, value: RwSignal<bool>, disabled: bool| {
        view! {
            <label for=id>
                <input type="checkbox" id=id disabled=disabled prop:checked=move || value.get()
                    on:change=move |ev| value.set(event_target_checked(&ev)) />
                " " {label}
            </label>
        }
    };
    view! {
        <form class="c-card c-form" on:submit=save>
            <h2>"Tell me when…"</h2>
            <CheckList prefix="nk-" chosen=kinds
                items=NOTIFY_KINDS.iter().map(|(name, label)| CheckItem {
                    name: (*name).to_owned(), label: Some((*label).to_owned()), title: None,
                }).collect()
                toggle=Callback::new(move |(name, on): (String, bool)| kinds.update(|c| tick(c, &name, on))) />
            <fieldset>
                <legend>"How"</legend>
                {check("n-console", "In the console: a sound and a desktop notification", in_console, false)}
                {check("n-push", "Web Push to the browsers I turned it on in (also when the console is closed)", push, false)}
                {check("n-digest", "An email of what I left unread", digest, !mail_enabled)}
                <label for="n-delay">"Email after (minutes unread)"</label>
                <input id="n-delay" type="number" min="1" max="1440" prop:value=move || delay.get()
                    on:input=move |ev| delay.set(event_target_value(&ev)) />
            </fieldset>
            <ErrorLine error />
            <Show when=move || saved.get()><p class="c-hint" role="status">"Saved."</p></Show>
            <button type="submit" class="c-primary">"Save"</button>
        </form>
    }
}

/// Desktop notifications and Web Push for the browser in use.
#[component]
fn ThisBrowser(p: NotifyPage) -> impl IntoView {
    let status = RwSignal::new(None::<String>);
    let key = StoredValue::new(p.vapid_public_key);
    let allow = move |_| {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let answer = super::notify_live::call_async("ask", &[]).await;
            status.set(Some(match answer.as_deref() {
                Ok("granted") => "Desktop notifications are allowed.".to_owned(),
                Ok(other) => format!("Desktop notifications: {other}."),
                Err(e) => e.to_owned(),
            }));
        });
    };
    let push_on = move |_| {
        let _ = key;
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            use super::api::notify::push_subscribe;
            let done = match super::notify_live::call_async("subscribe", &[key.get_value().into()]).await {
                Ok(json) => match serde_json::from_str::<serde_json::Value>(&json) {
                    Ok(s) => {
                        let f = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
                        push_subscribe(f("endpoint"), f("p256dh"), f("auth")).await.map_err(|e| e.to_string())
                    }
                    Err(e) => Err(e.to_string()),
                },
                Err(e) => Err(e),
            };
            status.set(Some(match done {
                Ok(()) => "Web Push is on in this browser.".to_owned(),
                Err(e) => e,
            }));
        });
    };
    let push_off = move |_| {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            use super::api::notify::push_unsubscribe;
            let done = match super::notify_live::call_async("unsubscribe", &[]).await {
                Ok(endpoint) if endpoint.is_empty() => Ok(()),
                Ok(endpoint) => push_unsubscribe(endpoint).await.map(|_| ()).map_err(|e| e.to_string()),
                Err(e) => Err(e),
            };
            status.set(Some(match done {
                Ok(()) => "Web Push is off in this browser.".to_owned(),
                Err(e) => e,
            }));
        });
    };
    view! {
        <section class="c-card" aria-labelledby="n-browser">
            <h2 id="n-browser">"This browser"</h2>
            <p class="c-hint">"The browser asks for permission only when you press a button."</p>
            <button type="button" on:click=allow>"Allow desktop notifications"</button>
            " "
            <button type="button" on:click=push_on>"Turn on Web Push here"</button>
            " "
            <button type="button" on:click=push_off>"Turn off Web Push here"</button>
            <p class="c-hint" role="status">{move || status.get()}</p>
        </section>
    }
}
