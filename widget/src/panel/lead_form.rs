//! The lead form the escalation button opens: name, email or phone, message.

use web_sys::Element;

use super::dom::{attr, find, flag, value};
use super::model::Panel;
use crate::action::Action;
use crate::html::{Html, html};
use crate::protocol::{LeadForm, lead_problems};

/// The form, prefilled with what the website said about its signed-in user.
pub fn html(panel: &Panel) -> Html {
    let l = panel.labels;
    let user = panel.user.get();
    let name = user.as_ref().and_then(|u| u.name.clone());
    let email = user.and_then(|u| u.email);
    let title = if panel.away.with(Option::is_some) { l.leave_message } else { l.lead_title };
    let field = |label: &str, input: Html, name: &str| {
        html!("<label>{}{}</label><p class=\"pw-field-error\" data-f=\"{}\"></p>", label, input, name)
    };
    html!(
        "<form class=\"pw-lead\" data-pw=\"{}\" novalidate><h3>{}</h3>{}{}{}{}\
         <p class=\"pw-field-error\" data-f=\"form\"></p><div class=\"pw-lead-actions\">\
         <button type=\"button\" class=\"pw-secondary\" data-pw=\"{}\">{}</button>\
         <button type=\"submit\">{}</button></div></form>",
        Action::Lead,
        title,
        field(
            l.lead_name,
            html!("<input name=\"name\" autocomplete=\"name\"{}>", attr("value", name.as_deref())),
            "name"
        ),
        field(
            l.lead_email,
            html!("<input name=\"email\" type=\"email\" autocomplete=\"email\"{}>", attr("value", email.as_deref())),
            "email"
        ),
        field(l.lead_phone, Html::from_static("<input name=\"phone\" type=\"tel\" autocomplete=\"tel\">"), "phone"),
        field(l.lead_message, Html::from_static("<textarea name=\"message\" rows=\"3\"></textarea>"), "message"),
        Action::LeadCancel,
        l.lead_cancel,
        l.lead_submit
    )
}

/// Shows each field's problem (and clears the others').
fn show_errors(form: &Element, errors: &[(String, String)]) {
    for f in ["name", "email", "phone", "message", "form"] {
        let text = errors.iter().find(|(field, _)| field == f).map(|(_, m)| m.as_str());
        find(form, &format!("[data-f=\"{f}\"]")).set_text_content(text);
    }
}

/// The form was sent: checked here first, then by the server (whose field errors are shown too).
pub fn submit(panel: Panel, form: Element) {
    let get = |name: &str| value(&find(&form, &format!("[name=\"{name}\"]")));
    let opt = |s: String| if s.trim().is_empty() { None } else { Some(s) };
    let lead =
        LeadForm { name: get("name"), email: opt(get("email")), phone: opt(get("phone")), message: get("message") };
    let problems = lead_problems(&lead);
    if !problems.is_empty() {
        let errors: Vec<_> =
            problems.into_iter().map(|p| (p.field().to_owned(), panel.labels.lead_problem(p).to_owned())).collect();
        show_errors(&form, &errors);
        return;
    }
    show_errors(&form, &[]);
    let button = find(&form, "[type=\"submit\"]");
    flag(&button, "disabled", true);
    wasm_bindgen_futures::spawn_local(async move {
        if let Err(errors) = panel.submit_lead(lead).await {
            show_errors(&form, &errors);
        }
        flag(&button, "disabled", false);
    });
}
