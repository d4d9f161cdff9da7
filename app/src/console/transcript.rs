//! One message of a conversation's transcript in the console, as [`super::conversations`]
//! lists them.

use leptos::prelude::*;
use parley_widget::blocks::{self, BlockCtx};

use super::answers::SaveAsArticle;
use super::lists::when;
use super::types::ConsoleMessage;

/// What "Save as article" under a message needs.
#[derive(Clone, PartialEq)]
pub(super) struct SaveCtx {
    pub(super) conversation_id: String,
    pub(super) question: Option<String>,
    pub(super) bases: Vec<(String, String)>,
}

/// One message of the transcript: who and when (and the agent version that wrote an answer),
/// the text or rendered markdown, images, rating, blocks as the visitor saw them, tool calls,
/// usage, and "Save as article".
#[component]
pub(super) fn Message(m: ConsoleMessage, caps: StoredValue<Vec<String>>, save: Option<SaveCtx>) -> impl IntoView {
    let save = save.map(|s| {
        view! {
            <SaveAsArticle conversation_id=s.conversation_id message_id=m.id.clone() question=s.question
                text=m.text.clone() bases=s.bases />
        }
    });
    let who = match m.role.as_str() {
        "visitor" => "Visitor".to_owned(),
        "assistant" => "Bot".to_owned(),
        "operator" => m.author.clone().unwrap_or_else(|| "Operator".into()),
        other => other.to_owned(),
    };
    let lang = parley_widget::i18n::Lang::of_text(&m.text);
    // Blocks as the visitor saw them (the widget's renderers write `Html`: what a tool wrote, escaped).
    let blocks: Vec<String> = caps.with_value(|caps| {
        let ctx = BlockCtx {
            capabilities: caps,
            labels: lang.labels(),
            lang,
            lead_submitted: false,
            away: false,
            now_ms: blocks::now_ms(),
        };
        m.blocks.iter().map(|block| blocks::render(block, &ctx).into_string()).collect()
    });
    // Model output is markdown, rendered by the widget's sanitiser; everything people typed is text.
    let body = if m.role == "assistant" {
        view! { <div class="c-md" inner_html=parley_widget::markdown::render(&m.text).into_string()></div> }.into_any()
    } else {
        view! { <p class="c-text">{m.text.clone()}</p> }.into_any()
    };
    let status = (m.status != "done" && m.status != "complete").then(|| format!(" · {}", m.status));
    let version = m.agent_version.map(|v| format!(" · version {v}"));
    view! {
        <li class=format!("c-msg c-msg-{}", m.role)>
            <div class="c-msg-head"><b>{who}</b><span class="c-hint">{when(m.created_at)}{version}{status}</span></div>
            {(!m.images.is_empty()).then(|| view! {
                <div class="c-images">
                    {m.images.into_iter().map(|id| {
                        let (href, src) = (format!("/admin/attachments/{id}"), format!("/admin/attachments/{id}"));
                        view! {
                            <a href=href target="_blank" rel="noopener">
                                <img class="c-image" src=src alt="Image sent by the visitor" loading="lazy" />
                            </a>
                        }
                    }).collect_view()}
                </div>
            })}
            {body}
            {m.rating.map(|(score, comment)| view! {
                <p class="c-rating" class:c-rating-down=score < 0>
                    <span class="c-icon" inner_html={if score > 0 { parley_widget::icons::THUMB_UP } else { parley_widget::icons::THUMB_DOWN }}></span>
                    {if score > 0 { " The visitor found this helpful" } else { " The visitor found this not helpful" }}
                    {comment.map(|c| format!(": “{c}”"))}
                </p>
            })}
            {blocks.into_iter().map(|html| view! { <div class="c-block" inner_html=html></div> }).collect_view()}
            {(!m.tools.is_empty()).then(|| view! {
                <details class="c-tools">
                    <summary>{format!("{} tool call(s)", m.tools.len())}</summary>
                    {m.tools.into_iter().map(|t| { let nested = t.under.is_some(); view! {
                        <div class="c-tool" class:c-tool-nested=nested>
                            <div>
                                {t.under.map(|u| view! { <span class="c-hint">{format!("{} › ", u.strip_prefix("invoke_").unwrap_or(&u))}</span> })}
                                <code>{t.name}</code>" · "{t.status}" · "{format!("{} ms", t.duration_ms)}
                            </div>
                            <div class="c-hint">"Arguments"</div><pre>{t.arguments}</pre>
                            {t.result.map(|r| view! { <div class="c-hint">"Result"</div><pre>{r}</pre> })}
                            {t.error.map(|e| view! { <div class="c-hint">"Error"</div><pre>{e}</pre> })}
                        </div>
                    }}).collect_view()}
                </details>
            })}
            {save}
            {(!m.usage.is_empty()).then(|| view! {
                <ul class="c-usage">
                    {m.usage.into_iter().map(|u| view! {
                        <li>{format!("{} · {} · {} in / {} out tokens · US${:.5}", u.model, u.outcome, u.input_tokens, u.output_tokens, u.cost_usd)}</li>
                    }).collect_view()}
                </ul>
            })}
        </li>
    }
}
