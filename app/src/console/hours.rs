//! `/admin/hours`: an agent's business hours (outside them the AI keeps answering, the
//! escalation offers to leave a message and the panel says when people are back); and the
//! dashboard's *Who is online* with the away switch.

use leptos::prelude::*;

use super::api::hours::{
    agent_hours, my_notifications, presence, remove_hours, save_hours, save_notifications, set_away,
};
use super::fields::{CheckItem, CheckList, ErrorLine, tick};
use super::layout::console_ctx;
use super::lists::AgentChoice;
use super::types::{HoursView, NOTIFICATION_CHOICES, NotificationsView};

/// `/admin/hours`: choose an agent, then its hours.
#[component]
pub fn HoursPage() -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let version = RwSignal::new(0u64);
    let view_of = Resource::new(
        move || (agent.get(), version.get()),
        |(agent, _)| async move { if agent.is_empty() { Ok(None) } else { agent_hours(agent).await.map(Some) } },
    );
    view! {
        <h1>"Business hours"</h1>
        <p class="c-hint">
            "When your team answers. Outside these hours the assistant keeps answering; the button to reach a person becomes “Leave a message”, the chat says when you are back, and the assistant is told nobody is online until then."
        </p>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <AgentChoice id="h-agent" agent />
        </form>
        <Suspense fallback=|| view! { <p class="c-hint">"Loading…"</p> }>
            {move || view_of.get().map(|r| match r {
                Ok(Some(v)) => view! { <HoursForm v version /> }.into_any(),
                Ok(None) => view! { <p class="c-hint">"Choose an agent."</p> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </Suspense>
    }
}

#[component]
fn HoursForm(v: HoursView, version: RwSignal<u64>) -> impl IntoView {
    const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
    let agent_id = StoredValue::new(v.agent_id.clone());
    let time_zone = RwSignal::new(v.time_zone.clone());
    let days: [RwSignal<String>; 7] =
        std::array::from_fn(|i| RwSignal::new(v.days.get(i).cloned().unwrap_or_default()));
    let closed = RwSignal::new(v.closed_dates.clone());
    let error = RwSignal::new(None::<String>);
    let saved = RwSignal::new(false);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let d: Vec<String> = days.iter().map(|s| s.get_untracked()).collect();
        leptos::task::spawn_local(async move {
            let done = save_hours(
                agent_id.get_value(),
                time_zone.get_untracked(),
                d[0].clone(),
                d[1].clone(),
                d[2].clone(),
                d[3].clone(),
                d[4].clone(),
                d[5].clone(),
                d[6].clone(),
                closed.get_untracked(),
            )
            .await;
            match done {
                Ok(()) => {
                    error.set(None);
                    saved.set(true);
                    version.update(|v| *v += 1);
                }
                Err(e) => {
                    saved.set(false);
                    error.set(Some(e.to_string()));
                }
            }
        });
    };
    let remove = move |_| {
        leptos::task::spawn_local(async move {
            match remove_hours(agent_id.get_value()).await {
                Ok(()) => version.update(|v| *v += 1),
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    let set = v.set;
    view! {
        <p class="c-card" id="hours-now" role="status">{v.now.clone()}</p>
        <form class="c-card c-form" id="hours-form" on:submit=save>
            <label for="h-tz">"Time zone (e.g. Europe/Paris, Asia/Hong_Kong)"</label>
            <input id="h-tz" prop:value=time_zone on:input=move |ev| time_zone.set(event_target_value(&ev)) />
            <p class="c-hint">"Hours per day, like 09:00-12:00, 13:00-17:30; empty: closed that day."</p>
            {DAYS.iter().enumerate().map(|(i, name)| {
                let day = days[i];
                let id = format!("h-day{i}");
                view! {
                    <label for=id.clone()>{*name}</label>
                    <input id=id prop:value=day on:input=move |ev| day.set(event_target_value(&ev)) />
                }
            }).collect_view()}
            <label for="h-closed">"Closed dates (YYYY-MM-DD, one per line)"</label>
            <textarea id="h-closed" rows="3" prop:value=closed on:input=move |ev| closed.set(event_target_value(&ev))></textarea>
            <ErrorLine error />
            <Show when=move || saved.get()><p class="c-hint" role="status">"Saved."</p></Show>
            <button type="submit" class="c-primary">"Save hours"</button>
            " "
            <Show when=move || set>
                <button type="button" on:click=remove>"Remove hours (always reachable)"</button>
            </Show>
        </form>
    }
}

/// Who is online now, and the signed-in person's away switch.
#[component]
pub fn Presence() -> impl IntoView {
    let ctx = console_ctx();
    let version = RwSignal::new(0u64);
    let data = Resource::new(move || (ctx.changes.get(), version.get()), |_| presence());
    let error = RwSignal::new(None::<String>);
    view! {
        <section class="c-card" id="presence">
            <h2>"Who is online"</h2>
            <Transition>
                {move || data.get().map(|r| match r {
                    Ok(p) => {
                        let away = p.away;
                        let toggle = move |_| {
                            leptos::task::spawn_local(async move {
                                match set_away(!away).await {
                                    Ok(()) => version.update(|v| *v += 1),
                                    Err(e) => error.set(Some(e.to_string())),
                                }
                            });
                        };
                        let names = if p.online.is_empty() {
                            "Nobody is online.".to_owned()
                        } else {
                            p.online.iter().map(|(name, role)| format!("{name} ({role})")).collect::<Vec<_>>().join(", ")
                        };
                        view! {
                            <p id="online-now">{names}</p>
                            <p>
                                {if away { "You are away: you do not count as online." } else { "You are available." }}
                                " "
                                <button type="button" id="away-switch" aria-pressed=away.to_string() on:click=toggle>
                                    {if away { "I'm back" } else { "Set me away" }}
                                </button>
                            </p>
                        }
                        .into_any()
                    }
                    Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
            <ErrorLine error />
        </section>
    }
}

/// The account page's "Email me when…": which events mail the signed-in person.
#[component]
pub fn MailMe() -> impl IntoView {
    let data = Resource::new(|| (), |_| my_notifications());
    view! {
        <Transition>
            {move || data.get().map(|r| match r {
                Ok(v) => view! { <MailMeForm v /> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn MailMeForm(v: NotificationsView) -> impl IntoView {
    let chosen = RwSignal::new(v.events.clone());
    let error = RwSignal::new(None::<String>);
    let saved = RwSignal::new(false);
    let enabled = v.mail_enabled;
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            match save_notifications(chosen.get_untracked().join(",")).await {
                Ok(()) => {
                    error.set(None);
                    saved.set(true);
                }
                Err(e) => {
                    saved.set(false);
                    error.set(Some(e.to_string()));
                }
            }
        });
    };
    view! {
        <form class="c-card c-form" id="mail-me" on:submit=save>
            <h2>"Email me when…"</h2>
            {if enabled {
                format!("Mail goes to {}.", v.email)
            } else {
                "Email is not set up on this server (PARLEY_SMTP_HOST and PARLEY_MAIL_FROM).".to_owned()
            }}
            <fieldset disabled=!enabled>
                <legend>"Notifications"</legend>
                <CheckList prefix="n-" chosen
                    items=NOTIFICATION_CHOICES.iter().map(|(name, label)| CheckItem {
                        name: (*name).to_owned(), label: Some((*label).to_owned()), title: None,
                    }).collect()
                    toggle=Callback::new(move |(name, on): (String, bool)| chosen.update(|c| tick(c, &name, on))) />
            </fieldset>
            <ErrorLine error />
            <Show when=move || saved.get()><p class="c-hint" role="status">"Saved."</p></Show>
            <button type="submit" class="c-primary" disabled=!enabled>"Save"</button>
        </form>
    }
}
