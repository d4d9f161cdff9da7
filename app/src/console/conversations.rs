//! `/admin/conversations/:id`: the transcript with tool calls, usage and cost, and human
//! takeover (the list is in [`super::inbox_list`]).

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;
use parley_widget::blocks;

use super::api::conversations::{claim, close_conversation, conversation, release};
use super::api::identity::delete_person;
use super::copilot::HandoffSummary;
use super::error::ConsoleError;
use super::fields::ErrorLine;
use super::inbox_list::who;
use super::inbox_panel::InboxPanel;
use super::layout::console_ctx;
use super::lists::{Badge, query};
use super::loaded::Loaded;
use super::reply_box::ReplyBox;
use super::transcript::{Message, SaveCtx};
use super::types::{ConsultingState, ConversationDetail};

/// `/admin/conversations/:id`: the transcript, loaded once per conversation and kept current
/// in place (see [`Detail`]).
#[component]
pub fn ConversationPage() -> impl IntoView {
    let ctx = console_ctx();
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    // This conversation's events (not other conversations', not typing notices): the feed's
    // count when one arrives.
    let changed = Memo::new(move |_| {
        ctx.changes.track();
        ctx.last
            .with_untracked(|e| e.as_ref().filter(|e| e.conversation_id == id()).map(|_| ctx.changes.get_untracked()))
    });
    let detail = Resource::new(id, conversation);
    let visitor_typing = Memo::new(move |_| {
        ctx.last.with(|e| e.as_ref().is_some_and(|e| e.conversation_id == id() && e.kind == "typing"))
    });
    view! {
        <p><A href="/admin/conversations">"← Conversations"</A></p>
        <Loaded resource=detail let:d>
            <Detail d changed visitor_typing />
        </Loaded>
    }
}

/// One conversation. Drawn once; its events (a visitor's message, a colleague's note, an
/// assignment, the copilot's summary) and the operator's own actions fetch it again into `cur`,
/// and only the parts that show what changed are redrawn. The reply and note boxes are never
/// redrawn: what the operator is typing, the focus and the caret stay put (when the whole page
/// was drawn anew, keys typed across an event were lost or taken as shortcuts).
#[component]
fn Detail(d: ConversationDetail, changed: Memo<Option<u64>>, visitor_typing: Memo<bool>) -> impl IntoView {
    let id = StoredValue::new(d.item.id.clone());
    let visitor = StoredValue::new((d.item.visitor_id.clone(), d.item.user.is_some()));
    let cur = RwSignal::new(d);
    let version = RwSignal::new(0u64);
    let error = RwSignal::new(None::<String>);
    keep_current(id, cur, changed, version, error);
    // The drafts live as long as this conversation is shown.
    let draft = RwSignal::new(String::new());
    let note = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let act = move |what: &'static str| {
        if busy.get_untracked() {
            return;
        }
        if what == "close" && !super::layout::confirm("Close this conversation?") {
            return;
        }
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            let id = id.get_value();
            let outcome = match what {
                "claim" => claim(id).await.and_then(|won| {
                    if won {
                        Ok(())
                    } else {
                        Err(ConsoleError::Conflict("Another operator took this conversation first.".into()))
                    }
                }),
                "release" => release(id).await,
                _ => close_conversation(id).await,
            };
            if let Err(e) = outcome {
                error.set(Some(e.to_string()));
            }
            busy.set(false);
            version.update(|v| *v += 1);
        });
    };
    tick_payment_countdowns();
    let is_admin = console_ctx().me.with_value(|me| me.role == "admin");
    let mine = Memo::new(move |_| cur.with(|d| d.mine));
    // The header is drawn anew only when what it shows changes (a button with the focus stays
    // put when a message comes); the counts follow on their own.
    let head_data = Memo::new(move |_| {
        cur.with(|d| {
            let i = &d.item;
            let title = format!("{} · {}", who(i), i.agent_name);
            (
                title,
                i.user.as_ref().map(|u| u.id.clone()),
                i.visitor_id.clone(),
                i.status.clone(),
                i.claimed_by.clone(),
                d.mine,
            )
        })
    });
    let counts = move || cur.with(|d| format!("{} messages · US${:.4}", d.item.messages, d.cost_usd));
    let head = move || {
        let (title, user, visitor_id, status, holder, mine) = head_data.get();
        let can_claim = status != "closed" && holder.is_none();
        let can_close = status != "closed" && (mine || holder.is_none());
        view! {
            <h1>{title}</h1>
            {user.map(|id| view! {
                <p class="c-hint" id="identified-user">{format!("Signed in on the website as user id {id}")}</p>
            })}
            <A href=format!("/admin/contacts/{visitor_id}")>"Contact"</A>
            <Badge status=status.clone() />
            {holder.map(|h| view! { <span class="c-hint">{format!("held by {h}")}</span> })}
            <span class="c-hint">{counts}</span>
            <span class="c-spacer"></span>
            {can_claim.then(|| view! {
                <button type="button" class="c-primary" id="claim" aria-keyshortcuts="r" disabled=busy on:click=move |_| act("claim")>"Take over"</button>
            })}
            {mine.then(|| view! {
                <button type="button" id="release" disabled=busy on:click=move |_| act("release")>"Hand back to the bot"</button>
            })}
            {can_close.then(|| view! {
                <button type="button" id="close" aria-keyshortcuts="e" disabled=busy on:click=move |_| act("close")>"Close"</button>
            })}
        }
    };
    // The summary box keeps its own state ("write again"): drawn anew only when the stored
    // summary or whether it is shown changes.
    let summary = Memo::new(move |_| {
        cur.with(|d| {
            let shown = d.summary.is_some() || matches!(d.item.status.as_str(), "waiting_human" | "human");
            shown.then(|| d.summary.clone())
        })
    });
    // Each message keeps its node (an open "tool calls", a half-written article) unless it changed.
    let messages = Memo::new(move |_| {
        cur.with(|d| {
            let mut question: Option<String> = None;
            d.messages
                .iter()
                .map(|m| {
                    let save = matches!(m.role.as_str(), "operator" | "assistant").then(|| SaveCtx {
                        conversation_id: d.item.id.clone(),
                        question: question.clone(),
                        bases: d.knowledge_bases.clone(),
                    });
                    if m.role == "visitor" {
                        question = Some(m.text.clone());
                    }
                    let key = serde_json::to_string(m).unwrap_or_default();
                    (key, m.clone(), save, d.capabilities.clone())
                })
                .collect::<Vec<_>>()
        })
    });
    view! {
        <header class="c-conv-head">{head}</header>
        <ErrorLine error />
        {move || summary.get().map(|s| view! { <HandoffSummary id=id.get_value() summary=s /> })}
        {move || cur.with(|d| d.rating.clone()).map(|(score, comment)| view! {
            <p class="c-card c-rating" id="conversation-rating">
                {format!("The visitor rated this conversation {score} of 5")}
                {comment.map(|c| format!(": “{c}”"))}
            </p>
        })}
        {move || cur.with(|d| d.consulting.clone()).map(|state| view! { <Consulting state /> })}
        <ol class="c-transcript" aria-label="Transcript">
            <For each=move || messages.get() key=|(key, ..)| key.clone() let:((_, m, save, caps))>
                <Message m caps=StoredValue::new(caps) save />
            </For>
        </ol>
        <Show when=move || visitor_typing.get()>
            <p class="c-typing" aria-live="polite">"The visitor is typing…"</p>
        </Show>
        <Show when=move || mine.get()>
            <ReplyBox id=id.get_value() version text=draft />
        </Show>
        <InboxPanel id=id.get_value() current=cur version body=note />
        {is_admin.then(|| {
            let (visitor_id, identified) = visitor.get_value();
            view! { <VisitorData visitor_id identified /> }
        })}
    }
}

/// Fetches the conversation again into `cur` once it is shown, on each of its events (`changed`)
/// and each action of the operator's (`version`), browser only; an answer overtaken by a newer
/// request is dropped.
fn keep_current(
    id: StoredValue<String>,
    cur: RwSignal<ConversationDetail>,
    changed: Memo<Option<u64>>,
    version: RwSignal<u64>,
    error: RwSignal<Option<String>>,
) {
    let asked = StoredValue::new(0u64);
    Effect::new(move |before: Option<(Option<u64>, u64)>| {
        let now = (changed.get(), version.get());
        let event = now.0.is_some() && before.is_some_and(|b| b.0 != now.0);
        let acted = before.is_some_and(|b| b.1 != now.1);
        // Once when shown, too: an event that came while the page was being loaded (after its
        // request, before this) would otherwise be missed — the copilot's summary written
        // right after a hand-over was.
        let shown = before.is_none();
        if shown || event || acted {
            let n = asked.get_value() + 1;
            asked.set_value(n);
            leptos::task::spawn_local(async move {
                let Some(id) = id.try_get_value() else { return };
                let fresh = conversation(id).await;
                if asked.try_get_value() != Some(n) {
                    return;
                }
                match fresh {
                    // (Unchanged, nothing is drawn again.)
                    Ok(d) if cur.try_with_untracked(|c| *c != d).unwrap_or(false) => {
                        cur.try_set(d);
                    }
                    Ok(_) => {}
                    Err(e) => {
                        error.try_set(Some(format!("This conversation could not be brought up to date: {e}")));
                    }
                }
            });
        }
        now
    });
}

/// Payment countdowns in the transcript move once a second, as in the visitor's panel (in the
/// browser, while the conversation is shown).
fn tick_payment_countdowns() {
    Effect::new(move |_| {
        let tick = || {
            if let Some(body) = document().body() {
                blocks::tick_countdowns(&body, blocks::now_ms(), parley_widget::i18n::Lang::labels);
            }
        };
        if let Ok(handle) = set_interval_with_handle(tick, std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    });
}

/// For administrators: everything about this conversation's visitor (or website user), as a JSON
/// download, or deleted.
#[component]
fn VisitorData(visitor_id: String, identified: bool) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let href = format!("/admin/export.json{}", query(&[("visitor", &visitor_id)]));
    let whom = if identified { "this user" } else { "this visitor" };
    let remove = move |_| {
        if !super::layout::confirm(&format!(
            "Delete everything about {whom}: all their conversations, memories, leads, orders and images? This cannot be undone."
        )) {
            return;
        }
        let visitor_id = visitor_id.clone();
        leptos::task::spawn_local(async move {
            match delete_person(String::new(), String::new(), visitor_id).await {
                Ok(_) => super::layout::go_to("/admin/conversations"),
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <section class="c-card" id="visitor-data">
            <h2>{format!("The data of {whom}")}</h2>
            <a class="c-button" href=href download="parley-export.json">"Export (JSON)"</a>
            " "
            <button type="button" class="c-danger" on:click=remove>"Delete everything"</button>
            <ErrorLine error />
        </section>
    }
}

/// The coordinator's last state report: the stage and the facts it collected (all as text).
#[component]
fn Consulting(state: ConsultingState) -> impl IntoView {
    view! {
        <section class="c-card c-consulting" id="consulting-state" aria-labelledby="consulting-title">
            <h2 id="consulting-title">"Consulting state"</h2>
            {state.stage.map(|stage| view! {
                <p>"Stage: "<span class=format!("c-badge c-stage c-stage-{stage}")>{stage.replace('_', " ")}</span></p>
            })}
            {if state.facts.is_empty() {
                view! { <p class="c-hint">"No facts collected yet."</p> }.into_any()
            } else {
                view! {
                    <dl class="c-facts">
                        {state.facts.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
                    </dl>
                }.into_any()
            }}
            {state.note.map(|n| view! { <p class="c-text c-hint">{n}</p> })}
        </section>
    }
}
