//! What the visitor does in the panel: one listener per kind of event for the whole panel; each
//! button or form says what it does in `data-pw` (an [`Action`]: each handler's `match` names
//! every action, so a new one cannot be forgotten), the message it belongs to is the closest
//! `[data-key]`.

use wasm_bindgen::JsCast;
use web_sys::{Element, Event};

use super::dom::{self, closest, value};
use super::message::MsgView;
use super::ui::Ui;
use super::{host, lead_form};
use crate::action::Action;

/// The message view an event happened in.
fn view_of(ui: &Ui, ev: &Event) -> Option<std::rc::Rc<MsgView>> {
    closest(ev, "[data-key]")
        .and_then(|m| m.get_attribute("data-key"))
        .and_then(|k| k.parse().ok())
        .and_then(|k| ui.view(k))
}

impl Ui {
    /// Sends what the visitor wrote (and the images they chose).
    fn submit(&self) {
        let p = self.panel;
        let text = value(&self.input);
        let nothing = text.trim().is_empty() && p.pending.with(Vec::is_empty);
        if nothing || p.busy.get() || p.current.with(Option::is_some) {
            return;
        }
        // The agent's pre-chat form comes first (what was typed stays in the box).
        if p.prechat_pending() {
            p.ask_prechat_first();
            return;
        }
        dom::set_value(&self.input, "");
        p.send(text);
        super::scroll_to_bottom();
    }

    /// Sends a question for the visitor (a starter chip, "ask again").
    fn ask(&self, text: String) {
        let p = self.panel;
        if p.busy.get() || p.current.with(Option::is_some) {
            return;
        }
        p.send(text);
        super::scroll_to_bottom();
    }

    /// Asks for the transcript by mail (with the code the visitor typed, once one was mailed).
    fn email_transcript(&'static self, code: Option<String>) {
        let p = self.panel;
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(said) = p.email_transcript(code).await {
                *self.said.borrow_mut() = Some(said);
                self.draw_email();
            }
        });
    }

    /// One listener per kind of event for the whole panel.
    pub(super) fn listen(&'static self, root: &Element) {
        let p = self.panel;
        dom::on(root, "click", move |ev: Event| {
            let Some(el) = closest(&ev, "[data-pw]") else { return };
            let n = el.get_attribute("data-n").and_then(|n| n.parse::<usize>().ok());
            let view = || view_of(self, &ev);
            let Some(action) = dom::action(&el) else { return };
            match action {
                Action::Reset => p.reset(),
                Action::Close => host::post(&p, "parley:close"),
                Action::Starter => {
                    if let Some(q) = n.and_then(|i| self.starters.get(i)) {
                        self.ask(q.clone());
                    }
                }
                Action::Reply => {
                    if let Some(text) = el.get_attribute("data-text").filter(|t| !t.trim().is_empty()) {
                        self.ask(text);
                    }
                }
                Action::Retry => {
                    if let Some(q) = view().and_then(|v| p.question_to_retry(v.msg.key)) {
                        self.ask(q);
                    }
                }
                Action::Escalate => {
                    if !p.lead_open.get() {
                        p.lead_open.set(true);
                    }
                }
                Action::Send => self.submit(),
                Action::LeadCancel => p.lead_open.set(false),
                Action::Up => view().into_iter().for_each(|v| v.rate(self, 1, None)),
                Action::Down => view().into_iter().for_each(|v| v.rate(self, -1, None)),
                Action::Star => {
                    self.chosen.set(n.map(|n| n as u8));
                    self.draw_rate_conversation();
                }
                Action::Email => self.email_transcript(None),
                Action::Stop => p.stop(),
                Action::Attach => {
                    if let Some(picker) = self.picker.as_ref().and_then(|e| e.dyn_ref::<web_sys::HtmlElement>()) {
                        picker.click();
                    }
                }
                Action::Remove => {
                    if let Some(url) = el.get_attribute("data-url") {
                        p.remove_pending(&url);
                    }
                }
                // A submit button (its form's `submit` does the work), or a click inside a form.
                Action::SendRating
                | Action::Compose
                | Action::Form
                | Action::Lead
                | Action::EmailCode
                | Action::RateComment
                | Action::RateConversation => {}
            }
        });
        dom::on(root, "submit", move |ev: Event| {
            ev.prevent_default();
            let Some(form) = closest(&ev, "form") else { return };
            let comment = || form.query_selector("textarea").ok().flatten().map(|t| value(&t));
            let Some(action) = dom::action(&form) else { return };
            match action {
                Action::Compose => self.submit(),
                Action::Form => {
                    if let Some(view) = view_of(self, &ev) {
                        super::form::submit(p, &view, &form);
                    }
                }
                Action::Lead => lead_form::submit(p, form.clone()),
                Action::EmailCode => {
                    let code = form.query_selector("input").ok().flatten().map(|i| value(&i));
                    self.email_transcript(Some(code.unwrap_or_default()));
                }
                Action::RateComment => {
                    if let Some(view) = view_of(self, &ev) {
                        view.rate(self, -1, Some(comment().unwrap_or_default()));
                    }
                }
                Action::RateConversation => {
                    let Some(score) = self.chosen.get() else { return };
                    let comment = comment();
                    wasm_bindgen_futures::spawn_local(async move {
                        let result = p.rate(None, score as i8, comment).await;
                        *self.conversation_error.borrow_mut() = result.clone().err();
                        match result {
                            Ok(()) => p.conversation_rating.set(Some(score)),
                            Err(_) => self.draw_rate_conversation(),
                        }
                    });
                }
                // Buttons: their clicks are handled above.
                Action::Reset
                | Action::Close
                | Action::Starter
                | Action::Reply
                | Action::Retry
                | Action::Escalate
                | Action::Send
                | Action::Stop
                | Action::LeadCancel
                | Action::Up
                | Action::Down
                | Action::Star
                | Action::Email
                | Action::Attach
                | Action::Remove
                | Action::SendRating => {}
            }
        });
        dom::on(&self.input, "input", move |_| p.typed());
        dom::on(&self.input, "keydown", move |ev: Event| {
            let Some(key) = ev.dyn_ref::<web_sys::KeyboardEvent>() else { return };
            if key.key() == "Enter" && !key.shift_key() && !key.is_composing() {
                ev.prevent_default();
                self.submit();
            }
        });
        if let Some(picker) = &self.picker {
            let input = picker.clone();
            dom::on(picker, "change", move |_| {
                if let Some(files) = input.dyn_ref::<web_sys::HtmlInputElement>().and_then(|i| i.files()) {
                    p.choose(&files);
                }
                // The same file can be chosen again.
                dom::set_value(&input, "");
            });
        }
    }
}
