//! One message on screen: text (markdown for the assistant, plain text for people), tool calls,
//! images, blocks, its state, the retry of a cut-off answer and the visitor's rating of it. Each
//! part is redrawn when the value it shows is set.

use std::cell::RefCell;
use std::rc::Rc;

use web_sys::Element;

use super::dom::{Part, find, flag, make, next_frame, set_html};
use super::model::{Msg, ToolChip};
use super::ui::Ui;
use crate::action::Action;
use crate::html::{Html, html};
use crate::i18n::Labels;
use crate::icons;
use crate::markdown;
use crate::protocol::{MAX_RATING_COMMENT_CHARS, MessageStatus, Role, ToolCallStatus};

fn tool_label(chip: &ToolChip, labels: &Labels) -> Html {
    // An expert's tool (`invoke_policy_expert`) is named after the expert.
    let name = chip.name.strip_prefix("invoke_").unwrap_or(&chip.name).replace(['_', '-'], " ");
    match chip.status {
        ToolCallStatus::Started => html!("{}: {}…", labels.using_tool, name),
        ToolCallStatus::Succeeded => html!("{}{}", icons::html(icons::CHECK), name),
        ToolCallStatus::Failed => html!("{}{} ({})", icons::html(icons::CROSS), name, labels.tool_failed),
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
        // The tool list stays in place (a live region: each chip added is read out); then the
        // images' box, the bubble and the boxes of typing, blocks, status, error and rating.
        let root = make(&html!(
            "<div class=\"pw-msg pw-{}\" data-key=\"{}\"><ul class=\"pw-tools\" aria-live=\"polite\" hidden></ul>\
             <div class=\"pw-c\"></div><div class=\"pw-bubble {}\"></div><div class=\"pw-c\"></div>\
             <div class=\"pw-c\"></div><div class=\"pw-c\"></div><div class=\"pw-c\"></div><div class=\"pw-c\"></div></div>",
            msg.role.as_str(),
            msg.key,
            bubble
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
            Role::Assistant => set_html(&self.bubble, &markdown::render(text)),
            _ => self.bubble.set_text_content(Some(text)),
        });
        self.draw_typing();
    }

    fn draw_typing(&self) {
        let typing = self.msg.status.get() == MessageStatus::Streaming && self.msg.text.with(String::is_empty);
        self.typing.show(match typing {
            true => html!(
                "<div class=\"pw-typing\" role=\"img\" aria-label=\"{}\"><span></span><span></span><span></span></div>",
                self.labels.writing
            ),
            false => Html::new(),
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
            MessageStatus::Stopped => html!("<p class=\"pw-note\">{}</p>", labels.stopped),
            MessageStatus::Interrupted => {
                let retry = match ui.panel.question_to_retry(self.msg.key) {
                    Some(_) => html!(
                        "<button type=\"button\" class=\"pw-retry\" data-pw=\"{}\">{}</button>",
                        Action::Retry,
                        labels.retry
                    ),
                    None => Html::new(),
                };
                html!("<p class=\"pw-note\">{}</p>{}", labels.interrupted, retry)
            }
            _ => Html::new(),
        });
    }

    fn draw_tools(&self, labels: &Labels) {
        let items: Html = self.msg.tools.with(|tools| {
            tools
                .iter()
                .map(|c| html!("<li class=\"pw-tool pw-tool-{}\">{}</li>", c.status.as_str(), tool_label(c, labels)))
                .collect()
        });
        flag(&self.tools, "hidden", items.is_empty());
        if self.tools.inner_html() != items.as_str() {
            set_html(&self.tools, &items);
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
            self.msg.blocks.with(|blocks| blocks.iter().map(|b| crate::blocks::render(b, &ctx)).collect::<Html>())
        });
        self.blocks.show(html);
    }

    fn draw_error(&self) {
        self.error.show(
            self.msg
                .error
                .with(|e| e.as_ref().map(|e| html!("<p class=\"pw-error\" role=\"alert\">{}</p>", e)))
                .unwrap_or_default(),
        );
    }

    /// Thumbs up and down under a finished answer; after a thumbs down, an optional comment.
    fn draw_rate(&self, ui: &'static Ui) {
        if !self.msg.rateable() {
            self.rate.show(Html::new());
            return;
        }
        let l = ui.panel.labels;
        let rated = self.msg.rating.get();
        let vote = |pw: Action, label: &str, score: i8, icon: &'static str| {
            html!(
                "<button type=\"button\" class=\"pw-vote\" aria-label=\"{}\" title=\"{}\" aria-pressed=\"{}\" \
                 data-pw=\"{}\">{}</button>",
                label,
                label,
                rated == Some(score),
                pw,
                icons::html(icon)
            )
        };
        let state = self.rating.borrow();
        let mut html = html!(
            "<div class=\"pw-rate\" role=\"group\" aria-label=\"{}\">{}{}</div>",
            l.rate_answer,
            vote(Action::Up, l.rate_up, 1, icons::THUMB_UP),
            vote(Action::Down, l.rate_down, -1, icons::THUMB_DOWN)
        );
        if state.asking {
            html.push(&html!(
                "<form class=\"pw-rate-comment\" data-pw=\"{}\">{}</form>",
                Action::RateComment,
                comment_fields(l)
            ));
        }
        if state.thanked {
            html.push(&html!("<p class=\"pw-note\" role=\"status\">{}</p>", l.rate_thanks));
        }
        if let Some(e) = &state.error {
            html.push(&html!("<p class=\"pw-error\" role=\"alert\">{}</p>", e));
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
pub fn comment_fields(l: &Labels) -> Html {
    html!(
        "<label>{}<textarea rows=\"2\" maxlength=\"{}\"></textarea></label><button type=\"submit\" data-pw=\"{}\">{}</button>",
        l.rate_comment,
        MAX_RATING_COMMENT_CHARS,
        Action::SendRating,
        l.rate_send
    )
}
