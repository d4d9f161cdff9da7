//! The mail digest (issue 43): a user who turned digests on and left notifications unread for
//! their delay gets one mail listing them (kind, agent, time, a console link: ids only, never
//! what was written), once per notification. Each digest is queued in the mail outbox in the
//! transaction that marks its notifications mailed. A job, once across replicas.

use parley_protocol::html::escape_html;

use crate::engine::Engine;
use crate::engine::mail::CONSOLE;
use crate::store::DbError;
use crate::store::mail::{self, Mail};
use crate::store::notify_prefs::{self, DigestLine};

/// Users handled per run; notifications listed per digest.
const USERS_PER_RUN: i64 = 100;
const LINES_PER_DIGEST: i64 = 50;

/// What a kind means in a digest line.
fn says(kind: &str) -> &'static str {
    match kind {
        "assigned" => "Assigned to you",
        "mention" => "You were mentioned in a note",
        "queue" => "New in the unassigned queue",
        "reply" => "The visitor wrote",
        _ => "Notification",
    }
}

/// `(subject, text, html)` of a digest of `lines` for `name`. Links use [`CONSOLE`], replaced
/// with the console's address when sent.
pub fn digest_mail(name: &str, lines: &[DigestLine]) -> (String, String, String) {
    let subject = format!("Parley: {} unread notification{}", lines.len(), if lines.len() == 1 { "" } else { "s" });
    let when = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
            .unwrap_or_default()
    };
    let link = |l: &DigestLine| format!("{CONSOLE}/admin/conversations/{}", l.conversation_id);
    let agent = |l: &DigestLine| l.agent_name.clone().unwrap_or_else(|| "?".into());
    let mut text = format!("Hello {name},\n\nThese are still unread in the console:\n\n");
    let mut items = String::new();
    for l in lines {
        text.push_str(&format!("- {} ({}, {}): {}\n", says(&l.kind), agent(l), when(l.created_at), link(l)));
        items.push_str(&format!(
            "<li>{} ({}, {}): <a href=\"{}\">{}</a></li>",
            says(&l.kind),
            escape_html(&agent(l)),
            when(l.created_at),
            link(l),
            escape_html(&l.conversation_id)
        ));
    }
    text.push_str(&format!("\nAll notifications: {CONSOLE}/admin/notifications\n"));
    let html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\"><p>Hello {},</p>\
         <p>These are still unread in the console:</p><ul>{items}</ul>\
         <p><a href=\"{CONSOLE}/admin/notifications\">All notifications</a></p></body></html>",
        escape_html(name)
    );
    (subject, text, html)
}

impl Engine {
    /// Queues the digests due now; how many. Nothing without SMTP settings (the notifications
    /// wait, and go out once mail is set up if still unread).
    pub async fn send_digests(&self) -> Result<usize, DbError> {
        if !self.mail_enabled() {
            return Ok(0);
        }
        let now = self.now_ms();
        let due = notify_prefs::digest_due(self.db(), now, USERS_PER_RUN).await?;
        let mut sent = 0;
        for (user_id, email, name) in due {
            let mut tx = self.db().begin_write().await?;
            let lines = notify_prefs::take_for_digest(&mut tx, &user_id, now, LINES_PER_DIGEST).await?;
            if lines.is_empty() {
                tx.rollback().await?;
                continue;
            }
            let (subject, text, html) = digest_mail(&name, &lines);
            let mail = Mail { to: email, subject, text, html, kind: "digest", conversation_id: None, reply_to: None };
            mail::enqueue_in(&mut tx, &mail, now).await?;
            tx.commit().await?;
            sent += 1;
        }
        if sent > 0 {
            self.wake_outbox();
        }
        Ok(sent)
    }
}
