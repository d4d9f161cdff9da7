//! Visitors who left (issue 44, part 2). A visitor is **here** while one of their event streams
//! of the conversation is open (the panel follows it on every page of the site while the
//! conversation is under way). An operator's reply, or the agent's answer to a visitor who wrote
//! by mail, that arrives once they are gone — no stream for [`ReturnSettings::after`] — is mailed
//! to the address they left (the website's signed-in user's, or the contact form's), with a link
//! that opens the page they wrote from with the panel and the conversation (a random token,
//! valid [`ReturnSettings::link_ttl`]) and, when inbound mail is set up, a Reply-To address whose
//! token takes their answer back into the conversation once ([`super::inbound`]).
//!
//! Shortcuts: presence is counted per server; a visitor with tabs on two replicas counts as gone
//! when the one on this server closes, and a server killed with streams open leaves its
//! visitors "here" until they come back and leave again (no mail meanwhile, never a wrong one).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use super::super::Engine;
use super::masked;
use crate::mail_text::return_mail;
use crate::store::agents::Agent;
use crate::store::mail::{self as store, Mail};
use crate::store::return_mail::{self as returns, Purpose};
use crate::store::visitors::{self, ClientFacts};
use crate::store::{DbError, conversations};

/// When and how visitors who left are mailed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnSettings {
    /// How long without an open stream makes a visitor gone.
    pub after: Duration,
    /// The domain of reply addresses (`reply+TOKEN@DOMAIN`), whose mail reaches Parley's inbound
    /// SMTP listener or relay; `None`: return mails carry no reply address.
    pub inbound_domain: Option<String>,
    /// How long a return link opens the conversation.
    pub link_ttl: Duration,
    /// How long a reply address takes an answer.
    pub reply_ttl: Duration,
}

impl Default for ReturnSettings {
    fn default() -> Self {
        ReturnSettings {
            after: Duration::from_secs(300),
            inbound_domain: None,
            link_ttl: Duration::from_secs(7 * 86_400),
            reply_ttl: Duration::from_secs(30 * 86_400),
        }
    }
}

/// Open visitor streams per conversation on this server.
#[derive(Debug, Default)]
pub struct Presence(Mutex<HashMap<String, usize>>);

/// Held while a visitor's stream is open; dropping it counts the stream gone.
pub struct Here {
    engine: Engine,
    conversation_id: String,
}

impl Drop for Here {
    fn drop(&mut self) {
        let last = {
            let mut open = self.engine.0.presence.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match open.get_mut(&self.conversation_id) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                _ => {
                    open.remove(&self.conversation_id);
                    true
                }
            }
        };
        // (No runtime: the process is ending; the visitor counts as here until they come back.)
        if last && let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let engine = self.engine.clone();
            let id = std::mem::take(&mut self.conversation_id);
            runtime.spawn(async move {
                if let Err(e) = returns::visitor_left(engine.db(), &id, engine.now_ms()).await {
                    tracing::warn!(error = %e, "recording that a visitor left");
                }
            });
        }
    }
}

/// A browser that followed a return link: its visitor (the conversation's), its new token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnedVisitor {
    pub visitor_id: String,
    pub token: String,
    pub conversation_id: String,
}

/// How many replies one return mail quotes at most (the newest).
const QUOTED: usize = 5;

impl Engine {
    /// A visitor's stream of the conversation opened: they are here until the guard drops.
    pub async fn visitor_here(&self, conversation_id: &str) -> Result<Here, DbError> {
        let first = {
            let mut open = self.0.presence.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let n = open.entry(conversation_id.to_owned()).or_default();
            *n += 1;
            *n == 1
        };
        let guard = Here { engine: self.clone(), conversation_id: conversation_id.to_owned() };
        if first {
            returns::visitor_here(self.db(), conversation_id).await?;
        }
        Ok(guard)
    }

    /// Mails the replies of conversations whose visitor is gone (a job, every few seconds across
    /// replicas); how many mails it queued.
    pub async fn send_return_mail(&self) -> Result<usize, DbError> {
        let settings = self.settings().returns.clone();
        let after_ms = i64::try_from(settings.after.as_millis()).unwrap_or(i64::MAX);
        let mut sent = 0;
        for c in returns::pending(self.db(), 100).await? {
            let now = self.now_ms();
            if c.visitor_here != 0 {
                // They are here: the panel shows it (or its launcher counts it).
                returns::settle(self.db(), &c.id, now, now).await?;
                continue;
            }
            let left = c.visitor_left_at.unwrap_or(0).max(c.last_visitor_at.unwrap_or(0));
            if now - left < after_ms {
                continue;
            }
            let since = c.return_mailed_upto.max(c.visitor_left_at.unwrap_or(0));
            let replies = returns::replies_after(self.db(), &c.id, since, c.mail_in_at).await?;
            if replies.iter().any(|r| r.status == "streaming") {
                continue;
            }
            let replies: Vec<_> = replies.into_iter().filter(|r| !r.content.trim().is_empty()).collect();
            let Some(newest) = replies.last().map(|r| r.created_at) else {
                returns::settle(self.db(), &c.id, c.return_mailed_upto, now).await?;
                continue;
            };
            let Some(to) = super::visitor_mail::address_of(self, &c.visitor_id).await?.map(|(to, _)| to) else {
                returns::settle(self.db(), &c.id, newest, now).await?;
                continue;
            };
            if !self.mail_enabled() {
                returns::settle(self.db(), &c.id, newest, now).await?;
                continue;
            }
            let link = match c.page_url.as_deref() {
                Some(page) => {
                    let token = returns::new_token();
                    let expires = now.saturating_add(i64::try_from(settings.link_ttl.as_millis()).unwrap_or(i64::MAX));
                    returns::add_token(self.db(), &token, Purpose::Link, &c.id, &c.visitor_id, now, expires).await?;
                    Some(return_link(page, &token))
                }
                None => None,
            };
            let reply_to = match settings.inbound_domain.as_deref() {
                Some(domain) => {
                    let token = returns::new_token();
                    let expires = now.saturating_add(i64::try_from(settings.reply_ttl.as_millis()).unwrap_or(i64::MAX));
                    returns::add_token(self.db(), &token, Purpose::Reply, &c.id, &c.visitor_id, now, expires).await?;
                    Some(format!("reply+{token}@{domain}"))
                }
                None => None,
            };
            let (name, lang) = self.mail_voice(&c.agent_id).await?;
            let quoted: Vec<(String, String)> = replies
                .iter()
                .rev()
                .take(QUOTED)
                .rev()
                .map(|r| {
                    (
                        r.author
                            .clone()
                            .filter(|a| r.role == "operator" && !a.is_empty())
                            .unwrap_or_else(|| name.clone()),
                        r.content.clone(),
                    )
                })
                .collect();
            let (subject, text, html) = return_mail(lang, &name, &quoted, link.as_deref(), reply_to.is_some());
            let mail = Mail {
                to: to.clone(),
                subject,
                text,
                html,
                kind: "return",
                conversation_id: Some(c.id.clone()),
                reply_to,
            };
            store::enqueue(self.db(), &mail, now).await?;
            returns::settle(self.db(), &c.id, newest, now).await?;
            tracing::info!(conversation = %c.id, to = %masked(&to), replies = quoted.len(), "return mail queued");
            metrics::counter!("parley_return_mail_total").increment(1);
            sent += 1;
        }
        if sent > 0 {
            self.wake_outbox();
        }
        Ok(sent)
    }

    /// The site page the visitor writes from (an `http(s)` address, kept for the return link).
    pub async fn note_page(&self, conversation_id: &str, url: &str) -> Result<(), DbError> {
        returns::set_page(self.db(), conversation_id, url).await
    }

    /// Follows a return link of `agent`'s: a new visitor token for this browser that stands for
    /// the visitor the conversation belongs to, with the conversation's id — while the link is
    /// valid and the conversation is there (`None` otherwise: nothing is made).
    pub async fn follow_return_link(
        &self,
        agent: &Agent,
        token: &str,
        client: &ClientFacts,
    ) -> Result<Option<ReturnedVisitor>, DbError> {
        let now = self.now_ms();
        let Some((conversation_id, visitor_id)) = returns::link(self.db(), token.trim(), now).await? else {
            return Ok(None);
        };
        let Some(conv) = conversations::of_visitor(self.db(), &conversation_id, &visitor_id).await? else {
            return Ok(None);
        };
        if conv.agent_id != agent.id {
            return Ok(None);
        }
        let token = visitors::new_token();
        visitors::create_acting(self.db(), &agent.id, &token, &visitor_id, client, now).await?;
        Ok(Some(ReturnedVisitor { visitor_id, token, conversation_id: conv.id }))
    }
}

/// The site page with `#parley-return=TOKEN` in place of its own fragment.
fn return_link(page: &str, token: &str) -> String {
    let base = page.split_once('#').map_or(page, |(b, _)| b);
    format!("{base}#parley-return={token}")
}

/// An address the panel may report as the visitor's page: `http(s)`, at most 2,048 bytes.
pub fn page_url_ok(url: &str) -> bool {
    url.len() <= 2048
        && url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_return_link_replaces_the_fragment_and_pages_are_checked() {
        assert_eq!(
            return_link("https://shop.example/p?x=1#top", "pr_a"),
            "https://shop.example/p?x=1#parley-return=pr_a"
        );
        assert_eq!(return_link("https://shop.example/", "pr_a"), "https://shop.example/#parley-return=pr_a");
        assert!(page_url_ok("https://shop.example/cart?x=1"));
        assert!(!page_url_ok("javascript:alert(1)"));
        assert!(!page_url_ok("file:///etc/passwd"));
        assert!(!page_url_ok(&format!("https://a.example/{}", "x".repeat(2100))));
    }
}
