//! One message on screen: text (markdown for the assistant, plain text for people), tool calls,
//! images, blocks, its state, the retry of a cut-off answer and the visitor's rating of it. Each
//! part is redrawn when the value it shows is set.

use std::cell::RefCell;
use std::rc::Rc;

use web_sys::Element;

use super::dom::{Part, attr, esc, find, flag, make, next_frame};
use super::model::{Msg, ToolChip};
use super::ui::Ui;
use crate::i18n::Labels;
use crate::markdown;
use crate::protocol::{MAX_RATING_COMMENT_CHARS, MessageStatus, Role, ToolCallStatus};

fn tool_label(chip: &ToolChip, labels: &Labels) -> String {
    // An expert's tool (`invoke_policy_expert`) is named after the expert.
    let name = chip.name.strip_prefix("invoke_").unwrap_or(&chip.name).replace(['_', '-'], " ");
    match chip.status {
        ToolCallStatus::Started => format!("{}: {name}…", labels.using_tool),
        ToolCallStatus::Succeeded => format!("✓ {name}"),
        ToolCallStatus::Failed => format!("✗ {name} ({})", labels.tool_failed),
    }
}

/// What the visitor did with the rating under an answer.
#[derive(Default)]
struct Rating {
    /// A thumbs down asks what was missing.
    asking: bool,
    thanked: bool,
    error: Option<String>,
}

/// A message's place in the page.
pub struct MsgView {
    pub msg: Msg,
    pub root: Element,
    labels: &'static Labels,
    bubble: Element,
    tools: Element,
    images: Part,
    typing: Part,
    blocks: Part,
    status: Part,
    error: Part,
    rate: Part,
    rating: RefCell<Rating>,
    /// A redraw of the text is due at the next frame (tokens arrive many per frame).
    text_due: std::cell::Cell<bool>,
}

impl MsgView {
    /// Makes the message's markup, draws it and redraws each part when its value is set.
    pub fn new(ui: &'static Ui, msg: Msg) -> Rc<MsgView> {
        let bubble = match msg.role {
            Role::Assistant => "pw-md",
            _ => "pw-plain",
        };
        let boxes = "<div class=\"pw-c\"></div>";
        // The tool list stays in place (a live region: each chip added is read out).
        let root = make(&format!(
            "<div class=\"pw-msg pw-{}\" data-key=\"{}\"><ul class=\"pw-tools\" aria-live=\"polite\" hidden></ul>\
             {boxes}<div class=\"pw-bubble {bubble}\"></div>{}</div>",
            msg.role.as_str(),
            msg.key,
            // typing, blocks, status, error, rating
            boxes.repeat(5)
        ));
        let part = |n: usize| Part::at(find(&root, &format!(":scope>:nth-child({n})")));
        let view = Rc::new(MsgView {
            msg,
            labels: ui.panel.labels,
            bubble: find(&root, ".pw-bubble"),
            tools: find(&root, ".pw-tools"),
            images: part(2),
            typing: part(4),
            blocks: part(5),
            status: part(6),
            error: part(7),
            rate: part(8),
            root,
            rating: RefCell::default(),
            text_due: Default::default(),
        });
        view.draw_text();
        view.draw_status(ui);
        view.draw_tools(ui.panel.labels);
        view.draw_images(ui.panel.labels);
        view.draw_blocks(ui);
        view.draw_error();
        let v = view.clone();
        msg.text.watch(move || {
            if !v.text_due.replace(true) {
                let v = v.clone();
                next_frame(move || {
                    v.text_due.set(false);
                    v.draw_text();
                });
            }
        });
        let v = view.clone();
        msg.status.watch(move || v.draw_status(ui));
        let v = view.clone();
        msg.tools.watch(move || v.draw_tools(ui.panel.labels));
        let v = view.clone();
        msg.images.watch(move || v.draw_images(ui.panel.labels));
        let v = view.clone();
        msg.blocks.watch(move || v.draw_blocks(ui));
        let v = view.clone();
        msg.error.watch(move || v.draw_error());
        let v = view.clone();
        msg.rating.watch(move || v.draw_rate(ui));
        view
    }

    fn draw_text(&self) {
        self.msg.text.with(|text| match self.msg.role {
            Role::Assistant => self.bubble.set_inner_html(&markdown::render(text)),
            _ => self.bubble.set_text_content(Some(text)),
        });
        self.draw_typing();
    }

    fn draw_typing(&self) {
        let typing = self.msg.status.get() == MessageStatus::Streaming && self.msg.text.with(String::is_empty);
        self.typing.show(match typing {
            true => format!(
                "<div class=\"pw-typing\" role=\"img\" aria-label=\"{}\"><span></span><span></span><span></span></div>",
                esc(self.labels.writing)
            ),
            false => String::new(),
        });
    }

    /// The message's state: `data-status`, the typing dots, "stopped" or "interrupted" (with the
    /// question to ask again), the rating.
    pub fn draw_status(&self, ui: &'static Ui) {
        let status = self.msg.status.get();
        let _ = self.root.set_attribute("data-status", status.as_str());
        self.draw_typing();
        self.draw_retry(ui);
        self.draw_rate(ui);
    }

    /// "Stopped", or "interrupted" and, while it is the last answer and nothing is being
    /// answered, its question can be asked again in one click.
    pub fn draw_retry(&self, ui: &'static Ui) {
        let labels = ui.panel.labels;
        self.status.show(match self.msg.status.get() {
            MessageStatus::Stopped => format!("<p class=\"pw-note\">{}</p>", esc(labels.stopped)),
            MessageStatus::Interrupted => {
                let retry = match ui.panel.question_to_retry(self.msg.key) {
                    Some(_) => format!(
                        "<button type=\"button\" class=\"pw-retry\" data-pw=\"retry\">{}</button>",
                        esc(labels.retry)
                    ),
                    None => String::new(),
                };
                format!("<p class=\"pw-note\">{}</p>{retry}", esc(labels.interrupted))
            }
            _ => String::new(),
        });
    }

    fn draw_tools(&self, labels: &Labels) {
        let items: String = self.msg.tools.with(|tools| {
            tools
                .iter()
                .map(|c| {
                    format!("<li class=\"pw-tool pw-tool-{}\">{}</li>", c.status.as_str(), esc(&tool_label(c, labels)))
                })
                .collect()
        });
        flag(&self.tools, "hidden", items.is_empty());
        if self.tools.inner_html() != items {
            self.tools.set_inner_html(&items);
        }
    }

    fn draw_images(&self, labels: &Labels) {
        self.images.show(super::attach::images_html(&self.msg, labels));
    }

    /// Whether an escalation button is among the blocks (redrawn once the lead form is sent).
    pub fn escalates(&self) -> bool {
        self.msg.blocks.with(|b| b.iter().any(|b| matches!(b, crate::protocol::Block::EscalationButton(_))))
    }

    /// The blocks (again when a payment changed, or the lead form was sent).
    pub fn draw_blocks(&self, ui: &'static Ui) {
        let html = ui.panel.capabilities.with(|caps| {
            let ctx = ui.block_ctx(caps);
            self.msg.blocks.with(|blocks| blocks.iter().map(|b| crate::blocks::render(b, &ctx)).collect::<String>())
        });
        self.blocks.show(html);
    }

    fn draw_error(&self) {
        self.error.show(
            self.msg
                .error
                .with(|e| e.as_ref().map(|e| format!("<p class=\"pw-error\" role=\"alert\">{}</p>", esc(e))))
                .unwrap_or_default(),
        );
    }

    /// Thumbs up and down under a finished answer; after a thumbs down, an optional comment.
    fn draw_rate(&self, ui: &'static Ui) {
        if !self.msg.rateable() {
            self.rate.show(String::new());
            return;
        }
        let l = ui.panel.labels;
        let rated = self.msg.rating.get();
        let vote = |pw: &str, label: &str, score: i8, icon: &str| {
            format!(
                "<button type=\"button\" class=\"pw-vote\" aria-label=\"{0}\" title=\"{0}\" aria-pressed=\"{1}\" \
                 data-pw=\"{pw}\">{icon}</button>",
                esc(label),
                rated == Some(score)
            )
        };
        let state = self.rating.borrow();
        let mut html = format!(
            "<div class=\"pw-rate\" role=\"group\" aria-label=\"{}\">{}{}</div>",
            esc(l.rate_answer),
            vote("up", l.rate_up, 1, "👍"),
            vote("down", l.rate_down, -1, "👎")
        );
        if state.asking {
            html += &format!("<form class=\"pw-rate-comment\" data-pw=\"rate-comment\">{}</form>", comment_fields(l));
        }
        if state.thanked {
            html += &format!("<p class=\"pw-note\" role=\"status\">{}</p>", esc(l.rate_thanks));
        }
        if let Some(e) = &state.error {
            html += &format!("<p class=\"pw-error\" role=\"alert\">{}</p>", esc(e));
        }
        drop(state);
        self.rate.show(html);
    }

    /// A click on a thumb, or the comment after a thumbs down (`comment` is then `Some`).
    pub fn rate(self: &Rc<Self>, ui: &'static Ui, score: i8, comment: Option<String>) {
        {
            let mut state = self.rating.borrow_mut();
            state.asking = score < 0 && comment.is_none();
            state.thanked = !state.asking;
        }
        let msg = self.msg;
        let before = msg.rating.get();
        msg.rating.set(Some(score));
        let view = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let result = ui.panel.rate(Some(msg.id.get()), score, comment).await;
            if result.is_err() {
                msg.rating.set_value(before);
            }
            view.rating.borrow_mut().error = result.err();
            view.draw_rate(ui);
        });
    }
}

/// The optional comment of a rating, and its button.
pub fn comment_fields(l: &Labels) -> String {
    format!(
        "<label>{}<textarea rows=\"2\"{}></textarea></label><button type=\"submit\" data-pw=\"send-rating\">{}</button>",
        esc(l.rate_comment),
        attr("maxlength", Some(&MAX_RATING_COMMENT_CHARS.to_string())),
        esc(l.rate_send)
    )
}
