//! A form the model asked for, sent by the visitor (issue 44, part 3): checked here with the
//! protocol's own rules (the server checks again against the form it stored), then sent as the
//! visitor's message, whose text is written from the answers as the server writes it.

use web_sys::Element;

use super::dom::{self, value};
use super::message::MsgView;
use super::model::Panel;
use crate::protocol::{Block, Form, FormSubmission, FormValue, answers_text};

/// The form's block, from the message that shows it.
fn block(view: &MsgView, form_id: &str) -> Option<Form> {
    view.msg.blocks.with(|blocks| {
        blocks.iter().find_map(|b| match b {
            Block::Form(f) if f.form_id == form_id => Some(f.clone()),
            _ => None,
        })
    })
}

/// Checks and sends `form` (the `<form>` element of a message's `form` block).
pub fn submit(panel: Panel, view: &MsgView, form: &Element) {
    let Some(block) = form.get_attribute("data-form").and_then(|id| block(view, &id)) else { return };
    let control = |name: &str| form.query_selector(&format!("[name=\"{name}\"]")).ok().flatten();
    let values: Vec<FormValue> = block
        .fields
        .iter()
        .map(|f| FormValue { name: f.name.clone(), value: control(&f.name).map(|c| value(&c)).unwrap_or_default() })
        .collect();
    let wrong = block.check(&values);
    for f in &block.fields {
        let problem =
            wrong.as_ref().err().filter(|(name, _)| *name == f.name).map(|(_, p)| panel.labels.form_problem(*p));
        if let Ok(Some(line)) = form.query_selector(&format!("[data-f=\"{}\"]", f.name)) {
            line.set_text_content(problem);
        }
        if let Some(c) = control(&f.name) {
            dom::flag(&c, "aria-invalid", false);
            if problem.is_some() {
                let _ = c.set_attribute("aria-invalid", "true");
                dom::focus(&c);
            }
        }
    }
    let Ok(answers) = wrong else { return };
    panel.send_form(answers_text(&answers), FormSubmission { form_id: block.form_id, values });
    super::scroll_to_bottom();
}
