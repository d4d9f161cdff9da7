//! The visitor's ratings: thumbs under each finished answer (a thumbs down asks what was
//! missing) and, once a person has closed the conversation, 1 to 5 for the whole of it.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;

use super::actions::API;
use super::client;
use super::model::{Msg, Panel};
use crate::protocol::{MAX_RATING_COMMENT_CHARS, Rate};

impl Panel {
    /// Sends a rating of the answer `message_id`, or of the conversation (`None`); what to show
    /// when it failed.
    pub async fn rate(&self, message_id: Option<String>, score: i8, comment: Option<String>) -> Result<(), String> {
        let (Some(conversation), Some(token)) = (self.conversation.get_untracked(), self.token.get_value()) else {
            return Err(self.labels.send_first.to_owned());
        };
        let url = format!("{API}/conversations/{conversation}/rating");
        let comment = comment.map(|c| c.trim().to_owned()).filter(|c| !c.is_empty());
        let body = Rate { message_id, score, comment };
        match client::json::<Rate, serde::de::IgnoredAny>("POST", &url, Some(&token), Some(&body)).await {
            Ok(_) => Ok(()),
            Err(e) => Err(self.error_text(&e)),
        }
    }
}

/// "Email me this conversation", once the visitor's address is known (a contact form, or the
/// website's signed-in user with an email).
#[component]
pub fn EmailTranscript(panel: Panel) -> impl IntoView {
    let labels = panel.labels;
    let said = RwSignal::new(None::<String>);
    let known = move || {
        panel.mail_transcripts
            && panel.conversation.get().is_some()
            && (panel.lead_submitted.get() || panel.user.with(|u| u.as_ref().is_some_and(|u| u.email.is_some())))
    };
    let send = move |_| {
        spawn_local(async move {
            let (Some(conversation), Some(token)) = (panel.conversation.get_untracked(), panel.token.get_value())
            else {
                return;
            };
            let url = format!("{API}/conversations/{conversation}/transcript-email");
            match client::json::<(), Value>("POST", &url, Some(&token), None).await {
                Ok(v) => said.set(Some(format!("{} {}", labels.email_sent, v["sent_to"].as_str().unwrap_or_default()))),
                Err(client::ClientError::Api { error, .. }) => said.set(Some(error.message)),
                Err(e) => said.set(Some(panel.error_text(&e))),
            }
        });
    };
    view! {
        <Show when=known>
            <div class="pw-email">
                <button type="button" class="pw-link" on:click=send>{labels.email_transcript}</button>
                {move || said.get().map(|s| view! { <span role="status">{s}</span> })}
            </div>
        </Show>
    }
}

/// Thumbs up and down under an answer; after a thumbs down, an optional comment.
#[component]
pub fn RateAnswer(msg: Msg, panel: Panel) -> impl IntoView {
    let labels = panel.labels;
    let asking = RwSignal::new(false);
    let comment = RwSignal::new(String::new());
    let thanked = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let send = move |score: i8, text: Option<String>| {
        let before = msg.rating.get_untracked();
        msg.rating.set(Some(score));
        spawn_local(async move {
            match panel.rate(Some(msg.id.get_value()), score, text).await {
                Ok(()) => error.set(None),
                Err(e) => {
                    msg.rating.set(before);
                    error.set(Some(e));
                }
            }
        });
    };
    let up = move |_| {
        asking.set(false);
        thanked.set(true);
        send(1, None);
    };
    let down = move |_| {
        thanked.set(false);
        asking.set(true);
        send(-1, None);
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        asking.set(false);
        thanked.set(true);
        send(-1, Some(comment.get_untracked()));
    };
    view! {
        <div class="pw-rate" role="group" aria-label=labels.rate_answer>
            <button type="button" class="pw-vote" aria-label=labels.rate_up title=labels.rate_up
                aria-pressed=move || (msg.rating.get() == Some(1)).to_string() on:click=up>"👍"</button>
            <button type="button" class="pw-vote" aria-label=labels.rate_down title=labels.rate_down
                aria-pressed=move || (msg.rating.get() == Some(-1)).to_string() on:click=down>"👎"</button>
        </div>
        <Show when=move || asking.get()>
            <form class="pw-rate-comment" on:submit=submit>
                <label>
                    {labels.rate_comment}
                    <textarea rows="2" maxlength=MAX_RATING_COMMENT_CHARS.to_string() prop:value=comment
                        on:input=move |ev| comment.set(event_target_value(&ev))></textarea>
                </label>
                <button type="submit">{labels.rate_send}</button>
            </form>
        </Show>
        <Show when=move || thanked.get()>
            <p class="pw-note" role="status">{labels.rate_thanks}</p>
        </Show>
        {move || error.get().map(|e| view! { <p class="pw-error" role="alert">{e}</p> })}
    }
}

/// 1 to 5 for a conversation a person closed, with an optional comment.
#[component]
pub fn RateConversation(panel: Panel) -> impl IntoView {
    let labels = panel.labels;
    let chosen = RwSignal::new(None::<u8>);
    let comment = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let Some(score) = chosen.get_untracked() else { return };
        spawn_local(async move {
            match panel.rate(None, score as i8, Some(comment.get_untracked())).await {
                Ok(()) => {
                    error.set(None);
                    panel.conversation_rating.set(Some(score));
                }
                Err(e) => error.set(Some(e)),
            }
        });
    };
    view! {
        <Show when=move || panel.closed.get()>
            {move || match panel.conversation_rating.get() {
                Some(_) => view! { <p class="pw-note pw-rated" role="status">{labels.rate_thanks}</p> }.into_any(),
                None => view! {
                    <form class="pw-rate-conversation" on:submit=submit>
                        <fieldset>
                            <legend>{labels.rate_conversation}</legend>
                            <div class="pw-stars">
                                {(1..=5u8).map(|n| view! {
                                    <button type="button" class="pw-star" aria-label=format!("{n}/5")
                                        aria-pressed=move || (chosen.get() == Some(n)).to_string()
                                        class:pw-on=move || chosen.get().is_some_and(|c| n <= c)
                                        on:click=move |_| chosen.set(Some(n))>"★"</button>
                                }).collect_view()}
                            </div>
                        </fieldset>
                        <Show when=move || chosen.get().is_some()>
                            <label>
                                {labels.rate_comment}
                                <textarea rows="2" maxlength=MAX_RATING_COMMENT_CHARS.to_string() prop:value=comment
                                    on:input=move |ev| comment.set(event_target_value(&ev))></textarea>
                            </label>
                            <button type="submit">{labels.rate_send}</button>
                        </Show>
                        {move || error.get().map(|e| view! { <p class="pw-error" role="alert">{e}</p> })}
                    </form>
                }.into_any(),
            }}
        </Show>
    }
}
