//! The panel on the page: its markup, made once from the agent's configuration, and which part
//! is redrawn when which value is set (what the visitor does with it: `events.rs`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::JsCast;
use web_sys::Element;

use super::dom::{self, Part, attr, find, flag, make};
use super::message::MsgView;
use super::model::{Panel, Words};
use super::{attach, host, lead_form, rating};
use crate::action::Action;
use crate::blocks::BlockCtx;
use crate::colors;
use crate::html::{Html, html};
use crate::icons;
use crate::protocol::{MAX_STARTERS, PublicAgentConfig};

/// The panel's elements and the state only its views keep.
pub struct Ui {
    pub panel: Panel,
    pub(super) list: Element,
    /// Messages go before this (the parts after the messages follow it).
    pub(super) end: Element,
    pub(super) input: Element,
    pub(super) send: Element,
    pub(super) composer: Element,
    pub(super) attach: Option<Element>,
    pub(super) picker: Option<Element>,
    pub(super) announce: Element,
    pub(super) views: RefCell<Vec<Rc<MsgView>>>,
    pub(super) starters: Vec<String>,
    pub(super) away: bool,
    pub(super) handoff: Part,
    pub(super) operator_typing: Part,
    pub(super) rate_conversation: Part,
    pub(super) email: Part,
    pub(super) starters_part: Part,
    pub(super) lead: Part,
    pub(super) notice: Part,
    pub(super) offline: Part,
    pub(super) pending: Part,
    /// The stars chosen for the closed conversation, and the last error rating it.
    pub(super) chosen: Cell<Option<u8>>,
    pub(super) conversation_error: RefCell<Option<String>>,
    /// What the last "email me this conversation" answered, and whether it asks for the code
    /// mailed to confirm the address.
    pub(super) said: RefCell<Option<(String, bool)>>,
}

/// Mounts the chat panel in `body` and starts it: restores the conversation, listens to the
/// host page, tells it the panel is ready.
pub fn mount(body: &Element, config: &PublicAgentConfig, host_origin: Option<String>, words: Words) {
    let panel = Panel::new(config, host_origin, words);
    let l = panel.labels;
    let lang = panel.lang;
    let placeholder = match config.placeholder.trim() {
        "" => l.placeholder,
        own => own,
    };
    let starters: Vec<String> =
        config.starters.iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).take(MAX_STARTERS).collect();
    let icon = |pw: Action, label: &str, glyph: &'static str| {
        html!(
            "<button type=\"button\" class=\"pw-icon\" title=\"{}\" aria-label=\"{}\" data-pw=\"{}\">{}</button>",
            label,
            label,
            pw,
            icons::html(glyph)
        )
    };
    let demo = match config.demo_model {
        true => html!("<span class=\"pw-demo\" title=\"{}\">{}</span>", l.demo_hint, l.demo_badge),
        false => Html::new(),
    };
    let away = panel.away.get().map(|back| {
        html!("<p class=\"pw-notice pw-away\" role=\"note\">{}</p>", super::away_text(l, lang.tag(), back))
    });
    let part = |name: &str| html!("<div class=\"pw-c\" data-part=\"{}\"></div>", name);
    let root = make(&html!(
        "<div class=\"pw-panel pw-scheme-{}\"{}{}{}><header class=\"pw-header\"><div class=\"pw-title\">\
         <strong>{}</strong>{}</div>{}{}</header>{}\
         <div id=\"pw-list\" class=\"pw-list\" role=\"log\" aria-live=\"off\"{} tabindex=\"0\">{}{}{}{}</div>\
         {}<div class=\"pw-sr\" role=\"status\" aria-live=\"polite\" aria-atomic=\"true\"></div>{}{}{}{}\
         <form class=\"pw-composer\" data-pw=\"{}\">{}<textarea class=\"pw-input\" rows=\"1\"{}{}{}></textarea>\
         <button type=\"button\" class=\"pw-send\"></button></form></div>",
        config.theme.scheme.as_str(),
        attr("style", Some(&colors::style(&config.theme.color, config.theme.text_color.as_deref()))),
        attr("lang", Some(lang.tag())),
        attr("dir", Some(lang.dir())),
        config.name,
        demo,
        icon(Action::Reset, l.new_conversation, icons::RESTART),
        icon(Action::Close, l.close, icons::CROSS),
        away.clone().unwrap_or_default(),
        attr("aria-label", Some(l.conversation)),
        part("handoff"),
        part("operator-typing"),
        part("rate-conversation"),
        part("email"),
        part("starters"),
        part("lead"),
        part("notice"),
        part("offline"),
        part("pending"),
        Action::Compose,
        if panel.accepts_images { attach::button_html(l) } else { Html::new() },
        attr("maxlength", Some(&config.max_message_chars.to_string())),
        attr("placeholder", Some(placeholder)),
        attr("aria-label", Some(placeholder)),
    ));
    let _ = body.append_child(&root);
    let part = |name: &str| Part::at(find(&root, &format!("[data-part=\"{name}\"]")));
    let ui: &'static Ui = Box::leak(Box::new(Ui {
        panel,
        list: find(&root, "#pw-list"),
        end: find(&root, "[data-part=\"handoff\"]"),
        input: find(&root, ".pw-input"),
        send: find(&root, ".pw-send"),
        composer: find(&root, ".pw-composer"),
        attach: root.query_selector(".pw-attach").ok().flatten(),
        picker: root.query_selector(".pw-file").ok().flatten(),
        announce: find(&root, ".pw-sr"),
        views: RefCell::default(),
        starters,
        away: away.is_some(),
        handoff: part("handoff"),
        operator_typing: part("operator-typing"),
        rate_conversation: part("rate-conversation"),
        email: part("email"),
        starters_part: part("starters"),
        lead: part("lead"),
        notice: part("notice"),
        offline: part("offline"),
        pending: part("pending"),
        chosen: Cell::new(None),
        conversation_error: RefCell::default(),
        said: RefCell::default(),
    }));
    ui.watch();
    ui.listen(&root);
    ui.draw_all();

    panel.boot();
    let input = ui.input.clone();
    host::listen(panel, move || dom::focus(&input));
    host::on_leave(panel);
    panel.listen_for_reads();
    host::close_on_escape(panel);
    host::post(&panel, "parley:ready");
    speak_and_tick(ui, lang.tag(), lang.dir());
}

/// The page speaks the panel's language (screen readers, hyphenation, fonts), and payment
/// countdowns move once a second.
fn speak_and_tick(ui: &'static Ui, tag: &str, dir: &str) {
    if let Some(html) = dom::document().document_element() {
        let _ = html.set_attribute("lang", tag);
        let _ = html.set_attribute("dir", dir);
    }
    let tick = wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || {
        crate::blocks::tick_countdowns(&ui.list, crate::blocks::now_ms(), |_| ui.panel.labels)
    });
    if let Some(w) = web_sys::window() {
        let _ = w.set_interval_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), 1000);
    }
    tick.forget();
}

impl Ui {
    pub fn block_ctx<'a>(&self, capabilities: &'a [String]) -> BlockCtx<'a> {
        BlockCtx {
            capabilities,
            labels: self.panel.labels,
            lang: self.panel.lang,
            lead_submitted: self.panel.lead_submitted.get(),
            away: self.away,
            now_ms: crate::blocks::now_ms(),
        }
    }

    /// Which part is redrawn when which value is set.
    fn watch(&'static self) {
        let p = self.panel;
        p.messages.watch(move || {
            self.sync_messages();
            self.draw_starters();
            self.draw_retries();
        });
        p.busy.watch(move || {
            self.draw_send();
            self.draw_retries();
        });
        p.current.watch(move || {
            self.draw_send();
            self.draw_retries();
        });
        p.lead_submitted.watch(move || {
            self.draw_handoff();
            self.draw_email();
            let views = self.views.borrow().clone();
            for view in views.iter().filter(|v| v.escalates()) {
                view.draw_blocks(self);
            }
        });
        p.human.watch(move || self.draw_handoff());
        p.operator_typing.watch(move || self.draw_operator_typing());
        p.closed.watch(move || self.draw_rate_conversation());
        p.conversation_rating.watch(move || self.draw_rate_conversation());
        p.conversation.watch(move || self.draw_email());
        p.user.watch(move || self.draw_email());
        p.announce.watch(move || self.announce.set_text_content(Some(&p.announce.get())));
        p.lead_open.watch(move || self.draw_lead());
        p.notice.watch(move || self.draw_notice());
        p.offline.watch(move || self.draw_offline());
        p.pending.watch(move || self.draw_pending());
    }

    fn draw_all(&'static self) {
        self.sync_messages();
        self.draw_starters();
        self.draw_send();
        self.draw_handoff();
        self.draw_email();
        self.draw_pending();
    }

    /// The message list follows `messages`: new ones are added at the end; after a reset or a
    /// restored conversation the list is put in its new order, keeping the messages that stay.
    fn sync_messages(&'static self) {
        let messages = self.panel.messages.get();
        let mut views = self.views.borrow_mut();
        // A view is kept for the same message, not one with the same key (a reset's new greeting).
        let same = |v: &MsgView, m: &super::model::Msg| v.msg.key == m.key && v.msg.text.same(&m.text);
        let appended = views.len() <= messages.len() && views.iter().zip(&messages).all(|(v, m)| same(v, m));
        if appended {
            for &msg in &messages[views.len()..] {
                let view = MsgView::new(self, msg);
                let _ = self.list.insert_before(&view.root, Some(&self.end));
                views.push(view);
            }
            return;
        }
        let mut old = std::mem::take(&mut *views);
        for &msg in &messages {
            let view = match old.iter().position(|v| same(v, &msg)) {
                Some(i) => old.swap_remove(i),
                None => MsgView::new(self, msg),
            };
            let _ = self.list.insert_before(&view.root, Some(&self.end));
            views.push(view);
        }
        for gone in old {
            gone.root.remove();
        }
    }

    pub(super) fn view(&self, key: u64) -> Option<Rc<MsgView>> {
        self.views.borrow().iter().find(|v| v.msg.key == key).cloned()
    }

    /// Whether a cut-off answer offers its question again depends on what follows it and on
    /// whether something is being answered.
    fn draw_retries(&'static self) {
        let views = self.views.borrow().clone();
        for view in views {
            view.draw_retry(self);
        }
    }

    /// Send, or Stop while an answer is being written: one button, so it keeps the focus, and
    /// never a submit button, so a click that lands just as the answer ends stops nothing and
    /// sends nothing (Enter in the input sends).
    fn draw_send(&self) {
        let p = self.panel;
        let b = &self.send;
        let writing = p.current.with(Option::is_some);
        let (class, action, text) = match writing {
            true => ("pw-send pw-stop", Action::Stop, p.labels.stop),
            false => ("pw-send", Action::Send, p.labels.send),
        };
        let _ = b.set_attribute("class", class);
        let _ = b.set_attribute("data-pw", action.as_str());
        flag(b, "disabled", !writing && p.busy.get());
        b.set_text_content(Some(text));
    }

    /// Starter questions, until the first message.
    fn draw_starters(&self) {
        let show = !self.starters.is_empty() && self.panel.messages.with(|m| m.len() <= 1);
        self.starters_part.show(match show {
            true => {
                let buttons: Html = self
                    .starters
                    .iter()
                    .enumerate()
                    .map(|(i, q)| {
                        html!(
                            "<button type=\"button\" class=\"pw-starter\" data-pw=\"{}\" data-n=\"{}\">{}</button>",
                            Action::Starter,
                            i,
                            q
                        )
                    })
                    .collect();
                html!(
                    "<div class=\"pw-starters\" role=\"group\" aria-label=\"{}\">{}</div>",
                    self.panel.labels.starters,
                    buttons
                )
            }
            false => Html::new(),
        });
    }

    fn draw_handoff(&self) {
        let p = self.panel;
        let waiting = p.lead_submitted.get() && p.human.with(Option::is_none);
        self.handoff.show(match waiting {
            true => html!("<p class=\"pw-notice pw-handoff\">{}</p>", p.labels.waiting_human),
            false => Html::new(),
        });
    }

    fn draw_operator_typing(&self) {
        self.operator_typing.show(match self.panel.operator_typing.get() {
            true => html!(
                "<div class=\"pw-msg pw-operator pw-operator-typing\"><div class=\"pw-typing\" aria-label=\"{}\">\
                 <span></span><span></span><span></span></div></div>",
                self.panel.labels.operator_typing
            ),
            false => Html::new(),
        });
    }

    pub(super) fn draw_rate_conversation(&self) {
        let error = self.conversation_error.borrow().clone();
        self.rate_conversation.show(rating::conversation_html(&self.panel, self.chosen.get(), error.as_deref()));
    }

    pub(super) fn draw_email(&self) {
        let said = self.said.borrow().clone();
        let code = said.as_ref().is_some_and(|s| s.1);
        self.email.show(rating::email_html(&self.panel, said.as_ref().map(|s| s.0.as_str()), code));
    }

    fn draw_lead(&self) {
        self.lead.show(match self.panel.lead_open.get() {
            true => lead_form::html(&self.panel),
            false => Html::new(),
        });
    }

    fn draw_notice(&self) {
        let notice = self.panel.notice.get();
        self.notice.show(notice.map(|n| html!("<p class=\"pw-notice\" role=\"status\">{}</p>", n)).unwrap_or_default());
    }

    fn draw_offline(&self) {
        self.offline.show(match self.panel.offline.get() {
            true => html!("<p class=\"pw-notice pw-offline\" role=\"status\">{}</p>", self.panel.labels.offline),
            false => Html::new(),
        });
    }

    fn draw_pending(&self) {
        let html = attach::pending_html(&self.panel);
        // The composer joins the thumbnails above it (no border between).
        flag(&self.composer, "data-pending", !html.is_empty());
        self.pending.show(html);
        if let Some(button) = &self.attach {
            flag(button, "disabled", attach::full(&self.panel));
        }
    }
}
