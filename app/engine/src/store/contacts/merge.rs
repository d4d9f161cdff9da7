//! Changing contacts: operators' name, email and phone; merging one contact into another and
//! separating them again. A merge moves no data: the merged contact's rows name the contact they
//! were merged into, so its page shows both, search finds both under its details, and each
//! browser keeps seeing only its own conversations.

use super::super::{Db, DbError};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

/// Why a merge was refused.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no such contact")]
    NotFound,
    #[error("a contact cannot be merged into itself")]
    Same,
    #[error("the two contacts talked with different agents; only an agent's own contacts can be merged")]
    OtherAgent,
    #[error("both are signed-in users of the website, which tells them apart; they cannot be merged")]
    BothIdentified,
    #[error("this contact is a signed-in user of the website: open their contact and merge the other one into it")]
    IdentifiedIntoAnonymous,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// A contact as a merge checks it: agent, whether the website identified it.
async fn contact(tx: &mut Tx<'_>, id: &str) -> Result<(String, bool), MergeError> {
    let row: Option<(String, Option<String>)> = sqlx::query_as(
        "SELECT v.agent_id, eu.id FROM visitors v LEFT JOIN end_users eu ON eu.visitor_id = v.id \
         WHERE v.id = $1 AND v.acts_as IS NULL AND v.merged_into IS NULL",
    )
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?;
    let (agent, user) = row.ok_or(MergeError::NotFound)?;
    Ok((agent, user.is_some()))
}

/// Merges the contact `from` (and whatever was merged into it) into `into`, whose empty details
/// take `from`'s. Both must be contacts of the same agent; a website user is never merged into
/// an anonymous contact (the other way round works) nor into another website user.
pub async fn merge(db: &Db, into: &str, from: &str, now: i64) -> Result<(), MergeError> {
    if into == from {
        return Err(MergeError::Same);
    }
    let mut tx = db.begin_write().await?;
    let (into_agent, into_user) = contact(&mut tx, into).await?;
    let (from_agent, from_user) = contact(&mut tx, from).await?;
    if into_agent != from_agent {
        return Err(MergeError::OtherAgent);
    }
    match (into_user, from_user) {
        (true, true) => return Err(MergeError::BothIdentified),
        (false, true) => return Err(MergeError::IdentifiedIntoAnonymous),
        _ => {}
    }
    sqlx::query("UPDATE visitors SET merged_into = $1, merged_at = $2 WHERE id = $3 OR merged_into = $3")
        .bind(into)
        .bind(now)
        .bind(from)
        .execute(&mut *tx)
        .await?;
    // The search reads the contact's details again for every conversation it now holds.
    sqlx::query(
        "UPDATE visitors SET contact_name = COALESCE(contact_name, (SELECT f.contact_name FROM visitors f WHERE f.id = $2)), \
         contact_email = COALESCE(contact_email, (SELECT f.contact_email FROM visitors f WHERE f.id = $2)), \
         contact_phone = COALESCE(contact_phone, (SELECT f.contact_phone FROM visitors f WHERE f.id = $2)), \
         contact_at = $3 WHERE id = $1",
    )
    .bind(into)
    .bind(from)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Separates the contact `from` from `into`, which it was merged into; `false` when it was not.
/// (Details `into` took from it stay.)
pub async fn separate(db: &Db, into: &str, from: &str, now: i64) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    let done = sqlx::query(
        "UPDATE visitors SET merged_into = NULL, merged_at = NULL, contact_at = $3 WHERE id = $2 AND merged_into = $1",
    )
    .bind(into)
    .bind(from)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query("UPDATE visitors SET contact_at = $2 WHERE id = $1").bind(into).bind(now).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(true)
}

/// Sets the operators' name, email and phone of the contact `id` (`None`: cleared; the values
/// already checked); `false` when it is no contact.
pub async fn edit(
    db: &Db,
    id: &str,
    name: Option<&str>,
    email: Option<&str>,
    phone: Option<&str>,
    now: i64,
) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE visitors SET contact_name = $2, contact_email = $3, contact_phone = $4, contact_at = $5 \
         WHERE id = $1 AND acts_as IS NULL AND merged_into IS NULL",
    )
    .bind(id)
    .bind(name)
    .bind(email)
    .bind(phone)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() == 1)
}
