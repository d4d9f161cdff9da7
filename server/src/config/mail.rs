//! The mail settings of `parley serve`: the SMTP server, and how much mail visitors may cause.

use super::SecretArg;

/// How mail leaves (operators' notifications, visitors' transcripts): an SMTP server. Without a
/// host, Parley sends no mail.
#[derive(clap::Args, Clone, Debug)]
pub struct MailArgs {
    /// The SMTP server's host name.
    #[arg(long, global = true, env = "PARLEY_SMTP_HOST")]
    pub smtp_host: Option<String>,
    /// Its port (587 for STARTTLS, 465 for TLS, 25 for a plain relay).
    #[arg(long, global = true, env = "PARLEY_SMTP_PORT")]
    pub smtp_port: Option<u16>,
    /// `starttls` (the default), `tls`, or `none` (a relay on this machine or network).
    #[arg(long, global = true, env = "PARLEY_SMTP_TLS")]
    pub smtp_tls: Option<String>,
    #[arg(long, global = true, env = "PARLEY_SMTP_USER")]
    pub smtp_user: Option<String>,
    #[arg(long, global = true, env = "PARLEY_SMTP_PASSWORD", hide_env_values = true, value_parser = SecretArg::parse, default_value = "", hide_default_value = true)]
    pub smtp_password: SecretArg,
    /// The sender, e.g. `Parley <parley@example.com>` (required with a host).
    #[arg(long, global = true, env = "PARLEY_MAIL_FROM")]
    pub mail_from: Option<String>,
    /// Mails one visitor may cause in 24 hours (transcripts and the codes that confirm an
    /// address); 0: no limit.
    #[arg(long, global = true, env = "PARLEY_TRANSCRIPTS_PER_VISITOR_PER_DAY", default_value_t = 5)]
    pub transcripts_per_visitor_per_day: i64,
    /// The same from one address (an IPv6 address by its /64).
    #[arg(long, global = true, env = "PARLEY_TRANSCRIPTS_PER_IP_PER_DAY", default_value_t = 20)]
    pub transcripts_per_ip_per_day: i64,
    /// The same for one agent, from all its visitors together.
    #[arg(long, global = true, env = "PARLEY_TRANSCRIPTS_PER_AGENT_PER_DAY", default_value_t = 500)]
    pub transcripts_per_agent_per_day: i64,
    /// A visitor with no open panel for this long counts as gone: replies after that are mailed
    /// to them (when their address is known).
    #[arg(long, global = true, env = "PARLEY_RETURN_MAIL_AFTER_SECS", default_value_t = 300)]
    pub return_mail_after_secs: u64,
    /// The domain of reply addresses (`reply+TOKEN@DOMAIN`): its MX, or a relay, delivers to the
    /// inbound SMTP listener. Unset: return mails cannot be answered by mail.
    #[arg(long, global = true, env = "PARLEY_INBOUND_MAIL_DOMAIN")]
    pub inbound_mail_domain: Option<String>,
    /// Where the inbound SMTP listener listens (e.g. `0.0.0.0:2525`); unset: none.
    #[arg(long, global = true, env = "PARLEY_INBOUND_SMTP_ADDR")]
    pub inbound_smtp_addr: Option<std::net::SocketAddr>,
}

impl Default for MailArgs {
    fn default() -> Self {
        let limits = parley_engine::engine::mail::TranscriptLimits::default();
        MailArgs {
            smtp_host: None,
            smtp_port: None,
            smtp_tls: None,
            smtp_user: None,
            smtp_password: SecretArg::default(),
            mail_from: None,
            transcripts_per_visitor_per_day: limits.per_visitor,
            transcripts_per_ip_per_day: limits.per_ip,
            transcripts_per_agent_per_day: limits.per_agent,
            return_mail_after_secs: 300,
            inbound_mail_domain: None,
            inbound_smtp_addr: None,
        }
    }
}

impl MailArgs {
    /// The daily limits on the mail visitors cause.
    pub fn transcript_limits(&self) -> parley_engine::engine::mail::TranscriptLimits {
        parley_engine::engine::mail::TranscriptLimits {
            per_visitor: self.transcripts_per_visitor_per_day,
            per_ip: self.transcripts_per_ip_per_day,
            per_agent: self.transcripts_per_agent_per_day,
        }
    }

    /// When visitors who left are mailed, and where their answers come in.
    pub fn return_settings(&self) -> anyhow::Result<parley_engine::engine::mail::ReturnSettings> {
        let domain = self.inbound_mail_domain.as_deref().map(str::trim).filter(|d| !d.is_empty());
        if let Some(d) = domain
            && (d.contains('@') || !d.contains('.') || d.chars().any(char::is_whitespace))
        {
            anyhow::bail!("PARLEY_INBOUND_MAIL_DOMAIN must be a domain like `reply.example.com`, not `{d}`");
        }
        Ok(parley_engine::engine::mail::ReturnSettings {
            after: std::time::Duration::from_secs(self.return_mail_after_secs),
            inbound_domain: domain.map(str::to_ascii_lowercase),
            ..Default::default()
        })
    }

    /// The settings, or `None` without a host; an error says what is wrong.
    pub fn settings(&self) -> anyhow::Result<Option<parley_engine::engine::mail::MailSettings>> {
        use parley_engine::engine::mail::{MailSettings, MailTls};
        let Some(host) = self.smtp_host.as_deref().map(str::trim).filter(|h| !h.is_empty()) else { return Ok(None) };
        let tls = match self.smtp_tls.as_deref() {
            None => MailTls::StartTls,
            Some(t) => MailTls::parse(t)
                .ok_or_else(|| anyhow::anyhow!("PARLEY_SMTP_TLS must be starttls, tls or none, not `{t}`"))?,
        };
        let from = self.mail_from.clone().filter(|f| !f.trim().is_empty()).ok_or_else(|| {
            anyhow::anyhow!("PARLEY_SMTP_HOST is set: PARLEY_MAIL_FROM (the sender address) is needed too")
        })?;
        if from.parse::<lettre::message::Mailbox>().is_err() {
            anyhow::bail!("PARLEY_MAIL_FROM `{from}` is not an address like `Parley <parley@example.com>`");
        }
        let port = self.smtp_port.unwrap_or(match tls {
            MailTls::StartTls => 587,
            MailTls::Tls => 465,
            MailTls::None => 25,
        });
        Ok(Some(MailSettings {
            host: host.to_owned(),
            port,
            tls,
            user: self.smtp_user.clone().filter(|u| !u.is_empty()),
            password: self.smtp_password.expose().map(str::to_owned),
            from,
        }))
    }
}
