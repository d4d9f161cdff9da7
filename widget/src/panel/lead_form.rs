//! The lead form the escalation button opens: name, email or phone, message.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::model::Panel;
use crate::protocol::{LeadForm, lead_problems};

#[component]
pub fn LeadFormView(panel: Panel) -> impl IntoView {
    let labels = panel.labels;
    // Prefilled with what the website said about its signed-in user.
    let user = panel.user.get_untracked();
    let name = RwSignal::new(user.as_ref().and_then(|u| u.name.clone()).unwrap_or_default());
    let email = RwSignal::new(user.and_then(|u| u.email).unwrap_or_default());
    let phone = RwSignal::new(String::new());
    let message = RwSignal::new(String::new());
    let errors = RwSignal::new(Vec::<(String, String)>::new());
    let sending = RwSignal::new(false);
    let error_for =
        move |field: &'static str| move || errors.with(|e| e.iter().find(|(f, _)| f == field).map(|(_, m)| m.clone()));
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let opt = |s: String| if s.trim().is_empty() { None } else { Some(s) };
        let form = LeadForm {
            name: name.get_untracked(),
            email: opt(email.get_untracked()),
            phone: opt(phone.get_untracked()),
            message: message.get_untracked(),
        };
        let problems = lead_problems(&form);
        if !problems.is_empty() {
            errors
                .set(problems.into_iter().map(|p| (p.field().to_owned(), labels.lead_problem(p).to_owned())).collect());
            return;
        }
        errors.set(Vec::new());
        sending.set(true);
        spawn_local(async move {
            if let Err(e) = panel.submit_lead(form).await {
                errors.set(e);
            }
            sending.set(false);
        });
    };
    view! {
        <form class="pw-lead" on:submit=submit novalidate>
            <h3>{if panel.away.with_value(Option::is_some) { labels.leave_message } else { labels.lead_title }}</h3>
            <label>
                {labels.lead_name}
                <input name="name" autocomplete="name" prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) />
            </label>
            <p class="pw-field-error">{error_for("name")}</p>
            <label>
                {labels.lead_email}
                <input name="email" type="email" autocomplete="email" prop:value=email on:input=move |ev| email.set(event_target_value(&ev)) />
            </label>
            <p class="pw-field-error">{error_for("email")}</p>
            <label>
                {labels.lead_phone}
                <input name="phone" type="tel" autocomplete="tel" prop:value=phone on:input=move |ev| phone.set(event_target_value(&ev)) />
            </label>
            <p class="pw-field-error">{error_for("phone")}</p>
            <label>
                {labels.lead_message}
                <textarea name="message" rows="3" prop:value=message on:input=move |ev| message.set(event_target_value(&ev))></textarea>
            </label>
            <p class="pw-field-error">{error_for("message")}</p>
            <p class="pw-field-error">{error_for("form")}</p>
            <div class="pw-lead-actions">
                <button type="button" class="pw-secondary" on:click=move |_| panel.lead_open.set(false)>{labels.lead_cancel}</button>
                <button type="submit" disabled=move || sending.get()>{labels.lead_submit}</button>
            </div>
        </form>
    }
}
