//! One message on screen: text (markdown for the assistant, plain text for people), tool calls,
//! blocks, and its state.

use leptos::prelude::*;

use super::attach::MessageImages;
use super::model::{Msg, Panel, ToolChip};
use super::rating::RateAnswer;
use crate::blocks::{BlockCtx, BlockView};
use crate::i18n::Labels;
use crate::markdown;
use crate::protocol::{Block, MessageStatus, Role, ToolCallStatus};

fn tool_label(chip: &ToolChip, labels: &Labels) -> String {
    // An expert's tool (`invoke_policy_expert`) is named after the expert.
    let name = chip.name.strip_prefix("invoke_").unwrap_or(&chip.name).replace(['_', '-'], " ");
    match chip.status {
        ToolCallStatus::Started => format!("{}: {name}…", labels.using_tool),
        ToolCallStatus::Succeeded => format!("✓ {name}"),
        ToolCallStatus::Failed => format!("✗ {name} ({})", labels.tool_failed),
    }
}

#[component]
pub fn MessageView(msg: Msg, ctx: BlockCtx, panel: Panel, ask: Callback<String>) -> impl IntoView {
    let labels = ctx.labels;
    let role = msg.role;
    let text = move || msg.text.get();
    let body = match role {
        Role::Assistant => view! {
            <div class="pw-bubble pw-md" inner_html=move || markdown::render(&msg.text.get())></div>
        }
        .into_any(),
        _ => view! { <div class="pw-bubble pw-plain">{text}</div> }.into_any(),
    };
    // Keyed by position, kind, text and payment state, so a `block_update` (a payment paid or
    // expired) redraws the block it changed.
    let blocks = move || {
        msg.blocks
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let state = match &b {
                    Block::PaymentQr(p) => p.status.as_str(),
                    _ => "",
                };
                (format!("{i}:{}:{state}:{}", b.kind(), b.fallback_text().unwrap_or_default()), b)
            })
            .collect::<Vec<_>>()
    };
    let typing = move || msg.status.get() == MessageStatus::Streaming && msg.text.with(String::is_empty);
    view! {
        <div class=format!("pw-msg pw-{}", role.as_str()) data-status=move || msg.status.get().as_str()>
            <Show when=move || msg.tools.with(|t| !t.is_empty())>
                <ul class="pw-tools" aria-live="polite">
                    <For each=move || msg.tools.get() key=|c| (c.call_id.clone(), c.status) let:chip>
                        <li class=format!("pw-tool pw-tool-{}", chip.status.as_str())>{tool_label(&chip, labels)}</li>
                    </For>
                </ul>
            </Show>
            <MessageImages msg labels />
            {body}
            <Show when=typing>
                <div class="pw-typing" role="img" aria-label=labels.writing>
                    <span></span>
                    <span></span>
                    <span></span>
                </div>
            </Show>
            <For each=blocks key=|(k, _)| k.clone() let:item>
                <BlockView block=item.1 ctx />
            </For>
            {move || match msg.status.get() {
                MessageStatus::Stopped => Some(view! { <p class="pw-note">{labels.stopped}</p> }.into_any()),
                MessageStatus::Interrupted => Some(view! {
                    <p class="pw-note">{labels.interrupted}</p>
                    // The last answer, cut off (a restart, a lost connection): its question can be
                    // asked again in one click.
                    {move || panel.question_to_retry(msg.key).map(|question| view! {
                        <button type="button" class="pw-retry" on:click=move |_| ask.run(question.clone())>
                            {labels.retry}
                        </button>
                    })}
                }.into_any()),
                _ => None,
            }}
            {move || msg.error.get().map(|e| view! { <p class="pw-error" role="alert">{e}</p> })}
            <Show when=move || msg.rateable()>
                <RateAnswer msg panel />
            </Show>
        </div>
    }
}
