//! `/admin/identity`: known visitors per agent — the identity secret the website's backend signs
//! its users' tokens with (made and rotated here, shown once), whether the agent requires
//! identity, and the users it has met (each a link to their conversations).

use leptos::prelude::*;
use leptos_router::components::A;

use super::api::identity::{agent_identity, delete_person, rotate_identity_secret, save_identity};
use super::fields::ErrorLine;
use super::lists::{AgentChoice, query, when};
use super::types::{DEFAULT_GRACE_HOURS, IdentityView, NewIdentitySecret, SecretItem, UserItem};

/// `/admin/identity`: choose an agent, then its identity settings, secrets and users.
#[component]
pub fn IdentityPage() -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let version = RwSignal::new(0u64);
    let view_of = Resource::new(
        move || (agent.get(), version.get()),
        |(agent, _)| async move { if agent.is_empty() { Ok(None) } else { agent_identity(agent).await.map(Some) } },
    );
    let created = RwSignal::new(None::<NewIdentitySecret>);
    view! {
        <h1>"Known visitors"</h1>
        <p class="c-hint">
            "Your website can tell Parley who its signed-in user is: its backend signs a short-lived token (a JWT, HS256) with the agent's identity secret, and the page passes it with "
            <code>"Parley.identify(token)"</code>" or "<code>"data-user-token"</code>
            ". The user's conversations, memories and leads then follow them on every device."
        </p>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <AgentChoice id="i-agent" agent />
        </form>
        {move || created.get().map(|s| view! {
            <section class="c-card c-new-token" role="status">
                <h2>"New identity secret — copy it now, it is not shown again"</h2>
                <pre id="new-identity-secret">{s.secret.clone()}</pre>
                <p class="c-hint">{format!(
                    "Sign with HS256; claims: sub (your user id), iat, exp, aud = \"{}\", optional name and email.{}",
                    s.agent_key,
                    if s.grace_hours > 0 { format!(" The previous secret is still accepted for {} hours.", s.grace_hours) } else { String::new() },
                )}</p>
            </section>
        })}
        <Suspense fallback=|| view! { <p class="c-hint">"Loading…"</p> }>
            {move || view_of.get().map(|r| match r {
                Ok(Some(v)) => view! { <IdentityDetail v version created /> }.into_any(),
                Ok(None) => view! { <p class="c-hint">"Choose an agent."</p> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </Suspense>
    }
}

#[component]
fn IdentityDetail(
    v: IdentityView,
    version: RwSignal<u64>,
    created: RwSignal<Option<NewIdentitySecret>>,
) -> impl IntoView {
    let agent_id = StoredValue::new(v.agent_id.clone());
    // One error line (the settings form's) for what any of the three parts tried.
    let error = RwSignal::new(None::<String>);
    let IdentityView { required, max_age_minutes, retention_days, secrets, users, .. } = v;
    view! {
        <IdentitySettings agent_id required max_age_minutes retention_days version error />
        <IdentitySecrets agent_id secrets version created error />
        <IdentityUsers agent_id users version error />
    }
}

/// Whether identity is required, the longest token lifetime, the retention period.
#[component]
fn IdentitySettings(
    agent_id: StoredValue<String>,
    required: bool,
    max_age_minutes: i64,
    retention_days: Option<i64>,
    version: RwSignal<u64>,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let required = RwSignal::new(required);
    let max_age = RwSignal::new(max_age_minutes.to_string());
    let retention = RwSignal::new(retention_days.map(|d| d.to_string()).unwrap_or_default());
    let saved = RwSignal::new(false);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            let saved_now = save_identity(
                agent_id.get_value(),
                required.get_untracked(),
                max_age.get_untracked(),
                retention.get_untracked(),
            )
            .await;
            match saved_now {
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
    view! {
        <form class="c-card c-form" id="identity-settings" on:submit=save>
            <h2>"Identity"</h2>
            <label for="i-required" class="c-check">
                <input type="checkbox" id="i-required" prop:checked=move || required.get()
                    on:change=move |ev| required.set(event_target_checked(&ev)) />
                " Only signed-in users of the website may chat"
            </label>
            <label for="i-max-age">"Longest token lifetime accepted (minutes, from iat to exp)"</label>
            <input id="i-max-age" inputmode="numeric" prop:value=max_age on:input=move |ev| max_age.set(event_target_value(&ev)) />
            <label for="i-retention">"Delete conversations after (days; empty keeps them)"</label>
            <input id="i-retention" inputmode="numeric" prop:value=retention on:input=move |ev| retention.set(event_target_value(&ev)) />
            <ErrorLine error />
            <Show when=move || saved.get()><p class="c-hint" role="status">"Saved."</p></Show>
            <button type="submit" class="c-primary">"Save"</button>
        </form>
    }
}

/// The agent's identity secrets (prefixes only) and the form that makes or rotates one.
#[component]
fn IdentitySecrets(
    agent_id: StoredValue<String>,
    secrets: Vec<SecretItem>,
    version: RwSignal<u64>,
    created: RwSignal<Option<NewIdentitySecret>>,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let grace = RwSignal::new(DEFAULT_GRACE_HOURS.to_string());
    let has_secret = secrets.iter().any(|s| s.expires_at.is_none());
    let rotate = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if has_secret
            && !super::layout::confirm("Make a new secret? The current one keeps working only for the grace period.")
        {
            return;
        }
        leptos::task::spawn_local(async move {
            match rotate_identity_secret(agent_id.get_value(), grace.get_untracked()).await {
                Ok(s) => {
                    error.set(None);
                    created.set(Some(s));
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <section class="c-card">
            <h2>"Identity secrets"</h2>
            <table class="c-table" id="identity-secrets">
                <thead><tr><th>"Secret"</th><th>"Created (UTC)"</th><th>"State"</th></tr></thead>
                <tbody>{secrets.into_iter().map(|s| {
                    let state = match (s.expires_at, s.accepted) {
                        (None, _) => "current".to_owned(),
                        (Some(at), true) => format!("accepted until {}", when(at)),
                        (Some(_), false) => "retired".to_owned(),
                    };
                    view! {
                        <tr class:c-revoked=!s.accepted>
                            <td><code>{format!("{}…", s.prefix)}</code></td>
                            <td>{when(s.created_at)}</td>
                            <td>{state}</td>
                        </tr>
                    }
                }).collect_view()}</tbody>
            </table>
            <form class="c-form" on:submit=rotate>
                <label for="i-grace">"Hours the replaced secret is still accepted"</label>
                <input id="i-grace" inputmode="numeric" prop:value=grace on:input=move |ev| grace.set(event_target_value(&ev)) />
                <button type="submit">{if has_secret { "Rotate secret" } else { "Create secret" }}</button>
            </form>
        </section>
    }
}

/// The website's users the agent has met: their conversations, export and deletion.
#[component]
fn IdentityUsers(
    agent_id: StoredValue<String>,
    users: Vec<UserItem>,
    version: RwSignal<u64>,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let agent_id_text = agent_id.get_value();
    view! {
        <section class="c-card">
            <h2>"Users"</h2>
            <table class="c-table" id="identity-users">
                <thead><tr><th>"User"</th><th>"User id"</th><th>"Conversations"</th><th>"Last seen (UTC)"</th><th>"Their data"</th></tr></thead>
                <tbody>{users.into_iter().map(|u| {
                    let href = format!(
                        "/admin/conversations{}",
                        query(&[("agent", &agent_id_text), ("user", &u.user.id)])
                    );
                    let export = format!("/admin/export.json{}", query(&[("agent_id", &agent_id_text), ("user", &u.user.id)]));
                    let subject = u.user.id.clone();
                    let shown = u.user.display();
                    let remove = move |_| {
                        let subject = subject.clone();
                        if !super::layout::confirm(&format!("Delete everything about user {subject}: conversations, memories, leads, orders, images? This cannot be undone.")) {
                            return;
                        }
                        leptos::task::spawn_local(async move {
                            match delete_person(agent_id.get_value(), subject, String::new()).await {
                                Ok(_) => version.update(|v| *v += 1),
                                Err(e) => error.set(Some(e.to_string())),
                            }
                        });
                    };
                    view! {
                        <tr>
                            <td><A href=href>{shown}</A></td>
                            <td><code>{u.user.id.clone()}</code></td>
                            <td>{u.conversations}</td>
                            <td>{when(u.last_seen_at)}</td>
                            <td>
                                <a class="c-button" href=export download="parley-export.json">"Export"</a>
                                " "
                                <button type="button" class="c-danger" on:click=remove>"Delete"</button>
                            </td>
                        </tr>
                    }
                }).collect_view()}</tbody>
            </table>
        </section>
    }
}
