//! `export-person` and `delete-person`: everything about one visitor or website user, as JSON or
//! gone (issue 16). Both are recorded in the audit log (actor `cli`).

use anyhow::Context;
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::engine::privacy::Person;
use parley_engine::store::{Db, agents, audit, identity, privacy, visitors};
use parley_server::Config;

use super::open_db;

#[derive(clap::Args)]
pub struct PersonArgs {
    /// The agent's public key (with --user).
    #[arg(long, requires = "user")]
    agent: Option<String>,
    /// The website's user id (the `sub` of its identity tokens).
    #[arg(long, conflicts_with = "visitor")]
    user: Option<String>,
    /// A visitor id (as the console's conversations show it).
    #[arg(long)]
    visitor: Option<String>,
}

/// The person named and the visitor row that holds their data.
async fn find(db: &Db, a: &PersonArgs) -> anyhow::Result<(Person, String)> {
    match (&a.agent, &a.user, &a.visitor) {
        (Some(key), Some(user), None) => {
            let agent = agents::by_public_key(db, key).await?.with_context(|| format!("no agent with key {key}"))?;
            let row = identity::user_by_subject(db, &agent.id, user)
                .await?
                .with_context(|| format!("agent {key} has no user {user}"))?;
            Ok((Person::User { agent_id: agent.id, subject: user.clone() }, row.visitor_id))
        }
        (None, None, Some(visitor)) => {
            let row =
                visitors::person_of(db, visitor).await?.with_context(|| format!("no visitor with id {visitor}"))?;
            Ok((Person::Visitor(visitor.clone()), row))
        }
        _ => anyhow::bail!("name a person: --agent KEY --user USER_ID, or --visitor VISITOR_ID"),
    }
}

/// Prints everything stored about the person as JSON.
pub async fn export_person(config: &Config, a: PersonArgs) -> anyhow::Result<()> {
    let db = open_db(config).await?;
    let (who, row) = find(&db, &a).await?;
    let data = privacy::export(&db, &row).await?.context("the person's data is gone")?;
    audit::record(&db, None, "cli", "person.export", Some(&who.audit_label()), "", SystemClock.now_ms()).await?;
    println!("{}", serde_json::to_string_pretty(&data)?);
    Ok(())
}

/// Deletes everything about the person.
pub async fn delete_person(config: &Config, a: PersonArgs) -> anyhow::Result<()> {
    let db = open_db(config).await?;
    let (who, row) = find(&db, &a).await?;
    let done = privacy::delete_person(&db, &row, SystemClock.now_ms()).await?;
    let detail = format!("{} conversations, {} rows", done.conversations, done.rows);
    audit::record(&db, None, "cli", "person.delete", Some(&who.audit_label()), &detail, SystemClock.now_ms()).await?;
    println!("deleted {} ({detail}); a running server forgets their tokens within a minute", who.audit_label());
    Ok(())
}
