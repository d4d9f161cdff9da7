//! The answer quality loop in the console: `/admin/unanswered` (questions the bot could not
//! answer, grouped), `/admin/replies` (saved replies), "Save as article" under a reply in a
//! transcript, and the `/` menu of the reply box.

use leptos::prelude::*;
use leptos_router::components::A;

use super::api::answers::{delete_saved_reply, save_as_article, save_reply, saved_replies, unanswered_questions};
use super::fields::ErrorLine;
use super::lists::{AgentChoice, AgentOptions, when};
use super::types::{SavedReplyItem, UnansweredGroup};

/// `/admin/unanswered`: what visitors asked that the bot could not answer well, most asked first.
#[component]
pub fn UnansweredPage() -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let days = RwSignal::new(30i64);
    let names = Resource::new(|| (), |_| super::api::agents::agent_names());
    let groups = Resource::new(move || (agent.get(), days.get()), |(agent, days)| unanswered_questions(agent, days));
    view! {
        <h1>"Unanswered questions"</h1>
        <p class="c-hint">
            "Questions where the knowledge search found nothing, the off-topic check fired, the visitor rated the answer not helpful, or asked for a person right after — similar questions together. Answer them in the knowledge, or save a good reply as an article from its conversation."
        </p>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <label for="u-agent">"Agent"</label>
            <select id="u-agent" on:change=move |ev| agent.set(event_target_value(&ev))>
                <option value="">"All agents"</option>
                <AgentOptions names />
            </select>
            <label for="u-days">"Period"</label>
            <select id="u-days" on:change=move |ev| days.set(event_target_value(&ev).parse().unwrap_or(30))>
                <option value="7">"7 days"</option>
                <option value="30" selected>"30 days"</option>
                <option value="90">"90 days"</option>
            </select>
        </form>
        <Transition fallback=|| view! { <p class="c-hint">"Loading…"</p> }>
            {move || groups.get().map(|r| match r {
                Ok(list) if list.is_empty() => view! { <p class="c-hint">"Nothing unanswered in this period."</p> }.into_any(),
                Ok(list) => view! { <UnansweredTable list /> }.into_any(),
                Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn UnansweredTable(list: Vec<UnansweredGroup>) -> impl IntoView {
    view! {
        <table class="c-table" id="unanswered">
            <thead><tr><th>"Question"</th><th>"Times"</th><th>"Why"</th><th>"Last (UTC)"</th><th>"Conversations"</th></tr></thead>
            <tbody>
                {list.into_iter().map(|g| {
                    let why = g.reasons.iter().map(|(r, n)| format!("{r} ×{n}")).collect::<Vec<_>>().join(", ");
                    let links = g.conversations.iter().enumerate().map(|(i, id)| {
                        let href = format!("/admin/conversations/{id}");
                        let text = format!("#{}", i + 1);
                        view! { <A href=href>{text}</A>" " }
                    }).collect_view();
                    view! {
                        <tr>
                            <td>{g.question}</td>
                            <td>{g.count}</td>
                            <td>{why}</td>
                            <td>{when(g.last_at)}</td>
                            <td>{links}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// "Save as article" under a reply or an answer: its text, editable, with a title (the visitor's
/// question to start with), into one of the agent's knowledge bases.
#[component]
pub fn SaveAsArticle(
    conversation_id: String,
    message_id: String,
    question: Option<String>,
    text: String,
    bases: Vec<(String, String)>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let title = RwSignal::new(question.unwrap_or_default().chars().take(200).collect::<String>());
    let body = RwSignal::new(text);
    let base = RwSignal::new(bases.first().map(|b| b.0.clone()).unwrap_or_default());
    let saved = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let ids = StoredValue::new((conversation_id, message_id));
    let field = format!("art-{}", ids.with_value(|(_, m)| m.chars().take(12).collect::<String>()));
    let many = bases.len() > 1;
    // Articles are edited by administrators.
    let admin = super::layout::console_ctx().me.with_value(|me| me.role == "admin");
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let (conversation, message) = ids.get_value();
        leptos::task::spawn_local(async move {
            let done = save_as_article(
                conversation,
                message,
                base.get_untracked(),
                title.get_untracked(),
                body.get_untracked(),
            )
            .await;
            match done {
                Ok(id) => {
                    error.set(None);
                    open.set(false);
                    saved.set(Some(id));
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        {move || saved.get().map(|id| view! {
            <p class="c-hint c-saved-article" role="status">
                "Saved as an article: the bot finds it from now on. "
                {admin.then(|| view! { <A href=format!("/admin/articles/{id}")>"Open it"</A> })}
            </p>
        })}
        <Show when=move || !open.get() && saved.get().is_none()>
            <button type="button" class="c-link c-save-article" on:click=move |_| open.set(true)>"Save as article"</button>
        </Show>
        <Show when=move || open.get()>
            <form class="c-form c-article-from-reply" on:submit=save>
                <label for=format!("{field}-title")>"Article title"</label>
                <input id=format!("{field}-title") prop:value=title maxlength="200"
                    on:input=move |ev| title.set(event_target_value(&ev)) />
                <label for=format!("{field}-body")>"Article text (edit it as it should be answered)"</label>
                <textarea id=format!("{field}-body") rows="5" prop:value=body
                    on:input=move |ev| body.set(event_target_value(&ev))></textarea>
                {many.then(|| view! {
                    <label for=format!("{field}-base")>"Knowledge base"</label>
                    <select id=format!("{field}-base") on:change=move |ev| base.set(event_target_value(&ev))>
                        {bases.iter().map(|(id, name)| view! { <option value=id.clone()>{name.clone()}</option> }).collect_view()}
                    </select>
                })}
                <ErrorLine error />
                <button type="submit" class="c-primary">"Save article"</button>
                " "
                <button type="button" on:click=move |_| open.set(false)>"Cancel"</button>
            </form>
        </Show>
    }
}

/// `/admin/replies`: each agent's saved replies, for operators to insert with `/shortcut`.
#[component]
pub fn SavedRepliesPage() -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let version = RwSignal::new(0u64);
    let list = Resource::new(
        move || (agent.get(), version.get()),
        |(agent, _)| async move { if agent.is_empty() { Ok(Vec::new()) } else { saved_replies(agent).await } },
    );
    let shortcut = RwSignal::new(String::new());
    let body = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            match save_reply(agent.get_untracked(), shortcut.get_untracked(), body.get_untracked()).await {
                Ok(_) => {
                    error.set(None);
                    shortcut.set(String::new());
                    body.set(String::new());
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <h1>"Saved replies"</h1>
        <p class="c-hint">"Answers your team gives often. In a conversation, type / in the reply box to pick one."</p>
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <AgentChoice id="r-agent" agent />
        </form>
        <Show when=move || !agent.get().is_empty()>
            <form class="c-card c-form" id="reply-add" on:submit=add>
                <h2>"Add or change a reply"</h2>
                <label for="r-shortcut">"Shortcut (typed after /)"</label>
                <input id="r-shortcut" prop:value=shortcut maxlength="32" on:input=move |ev| shortcut.set(event_target_value(&ev)) />
                <label for="r-body">"Reply"</label>
                <textarea id="r-body" rows="4" maxlength="4000" prop:value=body on:input=move |ev| body.set(event_target_value(&ev))></textarea>
                <ErrorLine error />
                <button type="submit" class="c-primary">"Save reply"</button>
            </form>
            <Transition>
                {move || list.get().map(|r| match r {
                    Ok(items) => view! { <RepliesTable items version error /> }.into_any(),
                    Err(e) => view! { <p class="c-error" role="alert">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
        </Show>
    }
}

#[component]
fn RepliesTable(items: Vec<SavedReplyItem>, version: RwSignal<u64>, error: RwSignal<Option<String>>) -> impl IntoView {
    if items.is_empty() {
        return view! { <p class="c-hint">"No saved replies yet."</p> }.into_any();
    }
    view! {
        <table class="c-table" id="saved-replies">
            <thead><tr><th>"Shortcut"</th><th>"Reply"</th><th></th></tr></thead>
            <tbody>
                {items.into_iter().map(|r| {
                    let id = StoredValue::new(r.id.clone());
                    let remove = move |_| {
                        leptos::task::spawn_local(async move {
                            match delete_saved_reply(id.get_value()).await {
                                Ok(()) => version.update(|v| *v += 1),
                                Err(e) => error.set(Some(e.to_string())),
                            }
                        });
                    };
                    view! {
                        <tr>
                            <td><code>{format!("/{}", r.shortcut)}</code></td>
                            <td class="c-pre">{r.body}</td>
                            <td><button type="button" class="c-danger" on:click=remove>"Delete"</button></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

/// The replies a `/` query in the reply box points at: `text` is the box's whole text; `Some`
/// (matching replies) while it is `/` followed by part of a shortcut or of the reply's words.
pub fn slash_matches<'a>(text: &str, replies: &'a [SavedReplyItem]) -> Option<Vec<&'a SavedReplyItem>> {
    let query = text.strip_prefix('/')?;
    if query.contains(char::is_whitespace) {
        return None;
    }
    let query = query.to_lowercase();
    Some(
        replies
            .iter()
            .filter(|r| r.shortcut.starts_with(&query) || (!query.is_empty() && r.body.to_lowercase().contains(&query)))
            .take(8)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_lists_the_replies_that_match() {
        let replies = vec![
            SavedReplyItem { id: "1".into(), shortcut: "hours".into(), body: "We are open 9 to 5.".into() },
            SavedReplyItem { id: "2".into(), shortcut: "refund".into(), body: "Refunds take 5 days.".into() },
        ];
        assert_eq!(slash_matches("/", &replies).unwrap().len(), 2);
        assert_eq!(slash_matches("/ho", &replies).unwrap()[0].id, "1");
        assert_eq!(slash_matches("/days", &replies).unwrap()[0].id, "2", "words of the reply match too");
        assert!(slash_matches("/zz", &replies).unwrap().is_empty());
        assert!(slash_matches("hello", &replies).is_none());
        assert!(slash_matches("/hours and more", &replies).is_none(), "a sentence is not a query");
    }
}
