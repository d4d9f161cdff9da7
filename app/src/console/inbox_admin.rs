//! `/admin/teams` and `/admin/labels` (admins, issue 43): the teams (members, agents, manual or
//! automatic assignment) and the labels operators put on conversations. The rules:
//! `docs/inbox.md`.

use leptos::prelude::*;

use super::api::agents::agent_names;
use super::api::inbox::{colleagues, delete_label, delete_team, labels, save_label, save_team, teams};
use super::fields::ErrorLine;
use super::inbox_panel::LabelChip;
use super::layout::confirm;
use super::loaded::Loaded;

/// `/admin/teams`: every team, and a form that creates one or changes the one picked.
#[component]
pub fn TeamsPage() -> impl IntoView {
    let version = RwSignal::new(0u64);
    let list = Resource::new(move || version.get(), |_| teams());
    // Read only inside a Transition (see `InboxPanel`).
    let people = Resource::new(|| (), |_| colleagues());
    let agents = Resource::new(|| (), |_| agent_names());
    let error = RwSignal::new(None::<String>);
    let editing = RwSignal::new(None::<String>);
    let name = RwSignal::new(String::new());
    let mode = RwSignal::new("manual".to_owned());
    let members = RwSignal::new(Vec::<String>::new());
    let handled = RwSignal::new(Vec::<String>::new());
    let toggle = |list: RwSignal<Vec<String>>, id: String| {
        list.update(|l| {
            if let Some(at) = l.iter().position(|x| *x == id) {
                l.remove(at);
            } else {
                l.push(id);
            }
        })
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        let (id, n, m) = (editing.get_untracked(), name.get_untracked(), mode.get_untracked());
        let (who, what) = (members.get_untracked().join(","), handled.get_untracked().join(","));
        leptos::task::spawn_local(async move {
            match save_team(id, n, m, who, what).await {
                Ok(_) => {
                    editing.set(None);
                    name.set(String::new());
                    members.set(Vec::new());
                    handled.set(Vec::new());
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    let remove = move |id: String| {
        if !confirm("Delete this team? Its conversations go back to no team.") {
            return;
        }
        leptos::task::spawn_local(async move {
            if let Err(e) = delete_team(id).await {
                error.set(Some(e.to_string()));
            }
            version.update(|v| *v += 1);
        });
    };
    view! {
        <h1>"Teams"</h1>
        <p class="c-hint">"A team handles the conversations of its agents that need a person. Automatic teams give each one to the member who is online, under their limit and waited longest."</p>
        <Loaded resource=list let:all>
            <table class="c-table" id="teams">
                <thead><tr><th>"Team"</th><th>"Assignment"</th><th>"Members"</th><th>"Agents"</th><th></th></tr></thead>
                <tbody>
                    {all.into_iter().map(|t| {
                        let pick = t.clone();
                        let id = t.id.clone();
                        view! {
                            <tr>
                                <td>{t.name.clone()}</td>
                                <td>{t.mode.clone()}</td>
                                <td>{t.members.iter().map(|(_, n)| n.clone()).collect::<Vec<_>>().join(", ")}</td>
                                <td>{t.agents.len()}</td>
                                <td>
                                    <button type="button" on:click=move |_| {
                                        editing.set(Some(pick.id.clone()));
                                        name.set(pick.name.clone());
                                        mode.set(pick.mode.clone());
                                        members.set(pick.members.iter().map(|(i, _)| i.clone()).collect());
                                        handled.set(pick.agents.clone());
                                    }>"Edit"</button>
                                    " "
                                    <button type="button" on:click=move |_| remove(id.clone())>"Delete"</button>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </Loaded>
        <form class="c-card" id="team-form" on:submit=save>
            <h2>{move || if editing.get().is_some() { "Change the team" } else { "New team" }}</h2>
            <label for="team-name">"Name"</label>
            <input id="team-name" maxlength="60" prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) />
            <label for="team-mode">"Assignment"</label>
            <select id="team-mode" on:change=move |ev| mode.set(event_target_value(&ev))>
                <option value="manual" selected=move || mode.get() == "manual">"By hand"</option>
                <option value="auto" selected=move || mode.get() == "auto">"Automatic (round-robin)"</option>
            </select>
            <fieldset>
                <legend>"Members"</legend>
                <Transition>{move || people.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|p| {
                    let id = p.id.clone();
                    let on = members.with(|m| m.contains(&p.id));
                    view! { <label><input type="checkbox" checked=on on:change=move |_| toggle(members, id.clone()) />{p.name}</label> }
                }).collect_view()}</Transition>
            </fieldset>
            <fieldset>
                <legend>"Agents it handles"</legend>
                <Transition>{move || agents.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|(id, agent)| {
                    let on = handled.with(|h| h.contains(&id));
                    view! { <label><input type="checkbox" checked=on on:change=move |_| toggle(handled, id.clone()) />{agent}</label> }
                }).collect_view()}</Transition>
            </fieldset>
            <button type="submit" class="c-primary">"Save team"</button>
            <ErrorLine error />
        </form>
    }
}

/// `/admin/labels`: the labels, and a form for a new one.
#[component]
pub fn LabelsPage() -> impl IntoView {
    let version = RwSignal::new(0u64);
    let list = Resource::new(move || version.get(), |_| labels());
    let error = RwSignal::new(None::<String>);
    let name = RwSignal::new(String::new());
    let color = RwSignal::new("#2563eb".to_owned());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        let (n, c) = (name.get_untracked(), color.get_untracked());
        leptos::task::spawn_local(async move {
            match save_label(None, n, c).await {
                Ok(_) => {
                    name.set(String::new());
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    let remove = move |id: String| {
        if !confirm("Delete this label? It comes off every conversation.") {
            return;
        }
        leptos::task::spawn_local(async move {
            if let Err(e) = delete_label(id).await {
                error.set(Some(e.to_string()));
            }
            version.update(|v| *v += 1);
        });
    };
    view! {
        <h1>"Labels"</h1>
        <Loaded resource=list let:all>
            <ul class="c-label-list" id="labels">
                {all.into_iter().map(|l| {
                    let id = l.id.clone();
                    view! { <li><LabelChip label=l />" "<button type="button" on:click=move |_| remove(id.clone())>"Delete"</button></li> }
                }).collect_view()}
            </ul>
        </Loaded>
        <form class="c-card" id="label-form" on:submit=save>
            <h2>"New label"</h2>
            <label for="label-name">"Name"</label>
            <input id="label-name" maxlength="40" prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) />
            <label for="label-color">"Colour"</label>
            <input id="label-color" type="color" prop:value=color on:input=move |ev| color.set(event_target_value(&ev)) />
            <button type="submit" class="c-primary">"Add label"</button>
            <ErrorLine error />
        </form>
    }
}
