//! A visitor's transcript by mail, without making Parley an open relay (issue 41): it goes only
//! to the email of the website's signed-in user (the owner's identity token vouches for it) or to
//! an address the visitor confirmed by typing a code mailed to it first; every mail a visitor
//! causes, codes included, counts against daily limits per visitor, per address (an IPv6
//! address by its /64) and per agent, held in the database so replicas share them.

use std::net::IpAddr;

use parley_protocol::Role;

use super::super::Engine;
use super::super::lang::Lang;
use super::masked;
use crate::mail_text::{confirmation, transcript};
use crate::store::mail::{self as store, Mail};
use crate::store::mail_confirm::{self as confirm, CodeCheck};
use crate::store::{DbError, conversations, messages};

/// A visitor may have their transcript sent to one address this often per hour.
pub const TRANSCRIPTS_PER_HOUR: i64 = 3;

/// Mails (codes and transcripts) visitors may cause per rolling 24 hours; 0: no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TranscriptLimits {
    pub per_visitor: i64,
    pub per_ip: i64,
    pub per_agent: i64,
}

impl Default for TranscriptLimits {
    fn default() -> Self {
        TranscriptLimits { per_visitor: 5, per_ip: 20, per_agent: 500 }
    }
}

/// What asking for the transcript did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TranscriptMail {
    /// Queued to this address (masked).
    Sent(String),
    /// The address is not confirmed yet: a code went to it (masked); send it back to go on.
    CodeSent(String),
}

/// Why a transcript cannot be mailed.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptMailError {
    #[error("email is not set up on this server")]
    NotConfigured,
    #[error("no email address is known for you: leave your contact details first")]
    NoAddress,
    #[error("that code is wrong or has expired: ask for a new one")]
    WrongCode,
    #[error("too many transcripts asked for; try again later")]
    TooMany,
    #[error("conversation not found")]
    NotFound,
    #[error(transparent)]
    Db(#[from] DbError),
}

const DAY_MS: i64 = 86_400_000;

impl Engine {
    /// Mails the visitor's transcript, or first a code that confirms their address. `code`: the
    /// code the visitor typed (from an earlier [`TranscriptMail::CodeSent`]). `ip` is the
    /// client's address (for the per-address limit).
    pub async fn email_transcript(
        &self,
        visitor_id: &str,
        conversation_id: &str,
        ip: IpAddr,
        code: Option<&str>,
    ) -> Result<TranscriptMail, TranscriptMailError> {
        if !self.mail_enabled() {
            return Err(TranscriptMailError::NotConfigured);
        }
        let conv = conversations::of_visitor(self.db(), conversation_id, visitor_id)
            .await?
            .ok_or(TranscriptMailError::NotFound)?;
        let (to, vouched) = address_of(self, visitor_id).await?.ok_or(TranscriptMailError::NoAddress)?;
        let now = self.now_ms();
        let client_ip = crate::net::address_group(ip);
        let confirmed = vouched || confirm::is_confirmed(self.db(), visitor_id, &to).await?;
        let confirmed = match (confirmed, code.map(str::trim).filter(|c| !c.is_empty())) {
            (true, _) => true,
            (false, Some(code)) => match confirm::check_code(self.db(), visitor_id, &to, code, now).await? {
                CodeCheck::Confirmed => true,
                CodeCheck::Refused => return Err(TranscriptMailError::WrongCode),
            },
            (false, None) => false,
        };
        self.within_mail_limits(visitor_id, &client_ip, &conv.agent_id, &to, now).await?;
        let (name, lang) = self.mail_voice(&conv.agent_id).await?;
        let (kind, (subject, text, html)) = if confirmed {
            ("transcript", transcript(lang, &name, &transcript_lines(self, &conv.id).await?))
        } else {
            let code = format!("{:06}", rand::random_range(0..1_000_000u32));
            confirm::set_code(self.db(), visitor_id, &to, &code, now).await?;
            ("confirm", confirmation(lang, &name, &code))
        };
        let mail = Mail { to: to.clone(), subject, text, html, kind, conversation_id: Some(conv.id), reply_to: None };
        store::enqueue(self.db(), &mail, now).await?;
        confirm::record_request(self.db(), visitor_id, &client_ip, &conv.agent_id, kind, now).await?;
        self.wake_outbox();
        Ok(if confirmed { TranscriptMail::Sent(masked(&to)) } else { TranscriptMail::CodeSent(masked(&to)) })
    }

    /// Refuses past a day's mails for the visitor, their address or the agent, or past a few an
    /// hour to one recipient. (Checked, then counted: requests at the same moment may pass a
    /// limit's edge by the requests in flight.)
    async fn within_mail_limits(
        &self,
        visitor_id: &str,
        client_ip: &str,
        agent_id: &str,
        to: &str,
        now: i64,
    ) -> Result<(), TranscriptMailError> {
        let limits = self.settings().transcripts;
        let (visitor, ip, agent) =
            confirm::counts_since(self.db(), visitor_id, client_ip, agent_id, now - DAY_MS).await?;
        let recipient = store::visitor_mail_since(self.db(), to, now - 3_600_000).await?;
        let over = |n: i64, limit: i64| limit > 0 && n >= limit;
        if over(visitor, limits.per_visitor)
            || over(ip, limits.per_ip)
            || over(agent, limits.per_agent)
            || over(recipient, TRANSCRIPTS_PER_HOUR)
        {
            metrics::counter!("parley_transcript_mail_refused_total").increment(1);
            return Err(TranscriptMailError::TooMany);
        }
        Ok(())
    }

    /// The agent's name and language, for a visitor's mail.
    pub(super) async fn mail_voice(&self, agent_id: &str) -> Result<(String, Lang), DbError> {
        Ok(crate::store::agents::by_id(self.db(), agent_id)
            .await?
            .map(|a| {
                let lang = Lang::of_agent(a.language, &a.greeting);
                (a.name, lang)
            })
            .unwrap_or_else(|| ("Parley".into(), Lang::En)))
    }
}

/// What the transcript shows: visitors', the agent's and operators' words.
async fn transcript_lines(engine: &Engine, conversation_id: &str) -> Result<Vec<(Role, String, String)>, DbError> {
    Ok(messages::list(engine.db(), conversation_id)
        .await?
        .into_iter()
        .filter(|m| matches!(m.role, Role::Visitor | Role::Assistant | Role::Operator) && !m.content.trim().is_empty())
        .map(|m| (m.role, m.author.unwrap_or_default(), m.content))
        .collect())
}

/// The address a visitor gave, and whether it is vouched for: the website's signed-in user's
/// email (the owner's identity token asserts it) is; the newest contact form's is not.
pub(super) async fn address_of(engine: &Engine, visitor_id: &str) -> Result<Option<(String, bool)>, DbError> {
    if let Some(user) = crate::store::identity::user_of_visitor(engine.db(), visitor_id).await?
        && let Some(email) = user.email.filter(|e| e.contains('@'))
    {
        return Ok(Some((email, true)));
    }
    if let Some(email) = crate::store::leads::latest_email(engine.db(), visitor_id).await? {
        return Ok(Some((email, false)));
    }
    // Else the newest address they gave in a form (the pre-chat form, one the model asked for).
    Ok(messages::latest_form_email(engine.db(), visitor_id).await?.map(|e| (e, false)))
}
