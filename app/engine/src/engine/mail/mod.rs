//! Email (issue 17): operators' notifications (a visitor waits for a person, a new lead, an order
//! paid, the daily summary) and a visitor's transcript, in the agent's language, as plain text and
//! HTML. Written to the mail outbox ([`crate::store::mail`]) — the notifications in the
//! same transaction as the change — and sent over SMTP with `lettre` by the same loop as the
//! webhooks, retried on the same schedule.

use std::time::Duration;

use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::Engine;
use super::webhooks::RETRY_DELAYS;
use crate::store::DbError;
use crate::store::mail::{self as store, Mail};

mod inbound;
mod return_mail;
mod visitor_mail;
pub use inbound::{InboundError, answer_text};
pub use return_mail::{Here, Presence, ReturnSettings, ReturnedVisitor, page_url_ok};
pub use visitor_mail::{TRANSCRIPTS_PER_HOUR, TranscriptLimits, TranscriptMail, TranscriptMailError};

pub use crate::mail_text::{CONSOLE, DayFigures, daily_summary, lang_of, notification, transcript};

/// How mail leaves: SMTP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailSettings {
    pub host: String,
    pub port: u16,
    pub tls: MailTls,
    pub user: Option<String>,
    pub password: Option<String>,
    /// `Parley <parley@example.com>`.
    pub from: String,
}

/// How the SMTP connection is protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailTls {
    /// Plain (a relay on the same machine or network; tests).
    None,
    /// STARTTLS, required (usually port 587).
    StartTls,
    /// TLS from the start (usually port 465).
    Tls,
}

impl MailTls {
    pub fn parse(s: &str) -> Option<MailTls> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "off" | "plain" => Some(MailTls::None),
            "starttls" => Some(MailTls::StartTls),
            "tls" | "ssl" | "smtps" => Some(MailTls::Tls),
            _ => None,
        }
    }
}

/// `text` with every email address in it [`masked`] (for log lines: addresses never reach a log).
pub fn mask_emails(text: &str) -> String {
    let is_part = |c: char| c.is_alphanumeric() || "._%+-".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match word.split_once('@') {
            Some((user, domain)) if !user.is_empty() && domain.contains('.') => out.push_str(&masked(word)),
            _ => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if is_part(c) || c == '@' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `a***@example.com`.
pub fn masked(address: &str) -> String {
    match address.split_once('@') {
        Some((user, domain)) => format!("{}***@{domain}", user.chars().next().unwrap_or('*')),
        None => "***".into(),
    }
}

impl Engine {
    /// Mail can be sent (SMTP is configured).
    pub fn mail_enabled(&self) -> bool {
        self.0.mail.is_some()
    }

    /// Queues the daily summary for every user who asked for it (a job, once a day across replicas).
    pub async fn send_daily_summary(&self) -> Result<usize, DbError> {
        let to = store::recipients(self.db(), "daily_summary").await?;
        if to.is_empty() || !self.mail_enabled() {
            return Ok(0);
        }
        let now = self.now_ms();
        let figures = crate::store::console::day_figures(self.db(), now - 86_400_000, now).await?;
        let (subject, text, html) = daily_summary(&figures);
        for (_, address) in &to {
            let mail = Mail {
                to: address.clone(),
                subject: subject.clone(),
                text: text.clone(),
                html: html.clone(),
                kind: "daily_summary",
                conversation_id: None,
                reply_to: None,
            };
            store::enqueue(self.db(), &mail, now).await?;
        }
        self.wake_outbox();
        Ok(to.len())
    }

    /// Sends the mail due now (one batch); how many it tried. Nothing without SMTP settings
    /// (what waits goes out once they are set).
    pub async fn deliver_due_mail(&self) -> Result<usize, DbError> {
        let Some(settings) = self.0.mail.clone() else { return Ok(0) };
        let due = store::claim_due(self.db(), self.process_id(), self.now_ms(), 60_000, 16).await?;
        let n = due.len();
        let transport = match transport(&settings) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "the SMTP settings do not make a transport");
                for m in due {
                    store::record(self.db(), &m.id, Some(&e), None, self.now_ms()).await?;
                }
                return Ok(n);
            }
        };
        for m in due {
            let result = self.send_one(&transport, &settings, &m).await;
            let now = self.now_ms();
            let (error, retry_at) = match result {
                Ok(()) => (None, None),
                Err(e) => {
                    let retry = RETRY_DELAYS
                        .get(usize::try_from(m.attempts).unwrap_or(usize::MAX))
                        .map(|d| now.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
                    // (An SMTP server's refusal often names the recipient: masked in the log.)
                    tracing::info!(mail = %m.id, error = %mask_emails(&e), "sending a mail failed");
                    (Some(e), retry)
                }
            };
            store::record(self.db(), &m.id, error.as_deref(), retry_at, now).await?;
        }
        Ok(n)
    }

    async fn send_one(
        &self,
        transport: &AsyncSmtpTransport<Tokio1Executor>,
        settings: &MailSettings,
        m: &store::DueMail,
    ) -> Result<(), String> {
        let console = self.services().public_url.trim_end_matches('/').to_owned();
        let from: Mailbox = settings.from.parse().map_err(|e| format!("the sender address: {e}"))?;
        let to: Mailbox = m.to_address.parse().map_err(|e| format!("the address {}: {e}", m.to_address))?;
        let mut message = Message::builder().from(from).to(to);
        if let Some(reply_to) = &m.reply_to {
            message = message.reply_to(reply_to.parse().map_err(|e| format!("the reply address: {e}"))?);
        }
        let message = message
            .subject(m.subject.clone())
            .multipart(MultiPart::alternative_plain_html(
                m.text_body.replace(CONSOLE, &console),
                m.html_body.replace(CONSOLE, &console),
            ))
            .map_err(|e| format!("building the message: {e}"))?;
        transport.send(message).await.map(|_| ()).map_err(|e| e.to_string())
    }
}

fn transport(s: &MailSettings) -> Result<AsyncSmtpTransport<Tokio1Executor>, String> {
    let builder = match s.tls {
        MailTls::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&s.host),
        MailTls::StartTls => {
            AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&s.host).map_err(|e| e.to_string())?
        }
        MailTls::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&s.host).map_err(|e| e.to_string())?,
    };
    let builder = builder.port(s.port).timeout(Some(Duration::from_secs(20)));
    let builder = match (&s.user, &s.password) {
        (Some(user), Some(password)) => builder.credentials(Credentials::new(user.clone(), password.clone())),
        _ => builder,
    };
    Ok(builder.build())
}

#[cfg(test)]
mod tests {
    use super::super::lang::Lang;
    use super::*;
    use serde_json::json;

    #[test]
    fn notifications_escape_what_visitors_typed_and_speak_the_agents_language() {
        let data = json!({"conversation_id": "c1", "lead": {"name": "Ada <b>", "email": "ada@example.com", "phone": null, "message": "Call me"}});
        let (kind, subject, text, html) = notification("lead.created", Lang::En, "Shop", &data).unwrap();
        assert_eq!(kind, "lead");
        assert_eq!(subject, "[Shop] New lead: Ada <b>");
        assert!(text.contains("Email: ada@example.com") && !text.contains("Phone"), "{text}");
        assert!(text.contains("{{console}}/admin/conversations/c1"), "{text}");
        assert!(html.contains("Ada &lt;b&gt;") && !html.contains("<b>"), "{html}");
        let (_, subject, _, _) = notification("conversation.waiting_human", Lang::Zh, "顾问", &data).unwrap();
        assert!(subject.contains("等待人工"), "{subject}");
        assert!(notification("conversation.claimed", Lang::En, "Shop", &data).is_none());
        assert_eq!(masked("ada@example.com"), "a***@example.com");
        assert_eq!(
            mask_emails("550 5.1.1 <ada.l+x@example.com>: unknown; cc bob@mail.example.org, not a@b or @x.y"),
            "550 5.1.1 <a***@example.com>: unknown; cc b***@mail.example.org, not a@b or @x.y"
        );
        // The setting decides; with `auto` the greeting's script, never the agent's field.
        assert_eq!(lang_of("zh-Hans", "Hello"), Lang::Zh);
        assert_eq!(lang_of("en", "您好"), Lang::En);
        assert_eq!(lang_of("auto", "您好！我是助手"), Lang::Zh);
        assert_eq!(lang_of("auto", "Hi! I'm the assistant"), Lang::En);
        assert_eq!(MailTls::parse("STARTTLS"), Some(MailTls::StartTls));
    }
}
