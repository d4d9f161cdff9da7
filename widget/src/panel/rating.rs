//! The visitor's ratings: thumbs under each finished answer (a thumbs down asks what was
//! missing) and, once a person has closed the conversation, 1 to 5 for the whole of it.

use serde_json::Value;

use super::actions::API;
use super::client;
use super::model::Panel;
use crate::action::Action;
use crate::html::{Html, html};
use crate::icons;
use crate::protocol::Rate;

impl Panel {
    /// Sends a rating of the answer `message_id`, or of the conversation (`None`); what to show
    /// when it failed.
    pub async fn rate(&self, message_id: Option<String>, score: i8, comment: Option<String>) -> Result<(), String> {
        let (Some(conversation), Some(token)) = (self.conversation.get(), self.token.get()) else {
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
/// website's signed-in user with an email); `said` is what the last request answered, and
/// `code` whether it mailed a code to confirm the address (the field for it follows).
pub fn email_html(panel: &Panel, said: Option<&str>, code: bool) -> Html {
    let l = panel.labels;
    let known = panel.mail_transcripts
        && panel.conversation.with(Option::is_some)
        && (panel.lead_submitted.get() || panel.user.with(|u| u.as_ref().is_some_and(|u| u.email.is_some())));
    if !known {
        return Html::new();
    }
    let said = said.map(|s| html!("<span role=\"status\">{}</span>", s)).unwrap_or_default();
    let action = match code {
        true => html!(
            "<form data-pw=\"{}\"><label>{} <input name=\"code\" inputmode=\"numeric\" \
             autocomplete=\"one-time-code\" maxlength=\"6\" size=\"6\" required></label> \
             <button type=\"submit\" class=\"pw-link\">{}</button></form>",
            Action::EmailCode,
            l.email_code,
            l.email_confirm
        ),
        false => html!(
            "<button type=\"button\" class=\"pw-link\" data-pw=\"{}\">{}</button>",
            Action::Email,
            l.email_transcript
        ),
    };
    html!("<div class=\"pw-email\">{}{}</div>", action, said)
}

impl Panel {
    /// Asks the server to mail the transcript (with the `code` the visitor typed, once one was
    /// mailed); what to say about it, and whether the server asks for a code.
    pub async fn email_transcript(&self, code: Option<String>) -> Option<(String, bool)> {
        let (Some(conversation), Some(token)) = (self.conversation.get(), self.token.get()) else {
            return None;
        };
        let url = format!("{API}/conversations/{conversation}/transcript-email");
        let body = code.map(|c| serde_json::json!({ "code": c }));
        Some(match client::json::<Value, Value>("POST", &url, Some(&token), body.as_ref()).await {
            Ok(v) => match v["code_sent_to"].as_str() {
                Some(to) => (format!("{} {to}", self.labels.email_code_sent), true),
                None => (format!("{} {}", self.labels.email_sent, v["sent_to"].as_str().unwrap_or_default()), false),
            },
            // A wrong code: the field stays for another try.
            Err(client::ClientError::Api { error, .. }) => (error.message, body.is_some()),
            Err(e) => (self.error_text(&e), body.is_some()),
        })
    }
}

/// 1 to 5 for a conversation a person closed (`chosen` so far), with an optional comment.
pub fn conversation_html(panel: &Panel, chosen: Option<u8>, error: Option<&str>) -> Html {
    let l = panel.labels;
    if !panel.closed.get() {
        return Html::new();
    }
    if panel.conversation_rating.with(Option::is_some) {
        return html!("<p class=\"pw-note pw-rated\" role=\"status\">{}</p>", l.rate_thanks);
    }
    let stars: Html = (1..=5u8)
        .map(|n| {
            let on = if chosen.is_some_and(|c| n <= c) { " pw-on" } else { "" };
            html!(
                "<button type=\"button\" class=\"pw-star{}\" aria-label=\"{}/5\" aria-pressed=\"{}\" \
                 data-pw=\"{}\" data-n=\"{}\">{}</button>",
                on,
                n,
                chosen == Some(n),
                Action::Star,
                n,
                icons::html(icons::STAR)
            )
        })
        .collect();
    let comment = match chosen {
        Some(_) => super::message::comment_fields(l),
        None => Html::new(),
    };
    let error = error.map(|e| html!("<p class=\"pw-error\" role=\"alert\">{}</p>", e)).unwrap_or_default();
    html!(
        "<form class=\"pw-rate-conversation\" data-pw=\"{}\"><fieldset><legend>{}</legend>\
         <div class=\"pw-stars\">{}</div></fieldset>{}{}</form>",
        Action::RateConversation,
        l.rate_conversation,
        stars,
        comment,
        error
    )
}
