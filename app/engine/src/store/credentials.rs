//! Provider keys at rest: sealed with the secret key (AES-256-GCM, see
//! [`crate::secret::SecretBox`]) by the agents' store functions. At every start,
//! [`prepare`] proves the secret key is the one the database was sealed with (one check value in
//! `secret_key_check`, and every stored key), and seals keys still stored as plain text.

use super::{Db, DbError, agents};
use crate::secret::{SecretBox, SecretError};

/// What the check value holds, sealed.
const CHECK: &str = "parley secret key check v1";

/// Why the secret key cannot be used with this database.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error(
        "the secret key does not open the provider keys stored in this database (they were sealed with another \
         key): set PARLEY_SECRET_KEY, or put the data directory's secret.key, back to the key used before"
    )]
    WrongKey,
    #[error("no secret key was given to the database")]
    NoKey,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Whether this database has been sealed with some secret key already.
pub async fn sealed_before(db: &Db) -> Result<bool, DbError> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM secret_key_check").fetch_one(&mut *db.read().await?).await?;
    let sealed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM agents WHERE api_key LIKE 'enc:%'")
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok(n > 0 || sealed > 0)
}

/// Checks the database's secret key against what is stored and seals plain-text keys; returns
/// how many were sealed. Nothing is changed when the key is wrong.
pub async fn prepare(db: &Db, now: i64) -> Result<usize, CredentialsError> {
    let secrets = db.secrets().ok_or(CredentialsError::NoKey)?;
    let stored = agents::stored_keys(db).await?;
    // Every sealed key must open before anything is written.
    for (_, key) in stored.iter().filter(|(_, k)| SecretBox::is_sealed(k)) {
        secrets.open(key).map_err(|_| CredentialsError::WrongKey)?;
    }
    // The first start writes the check value; a process starting at the same moment keeps the
    // one written first, and both then check against it.
    let existing: Option<String> =
        sqlx::query_scalar("SELECT sealed FROM secret_key_check WHERE id = 1").fetch_optional(db.writer()).await?;
    if let Some(check) = &existing {
        opens(secrets, check)?;
    } else {
        sqlx::query(
            "INSERT INTO secret_key_check (id, sealed, created_at) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING",
        )
        .bind(secrets.seal(CHECK))
        .bind(now)
        .execute(db.writer())
        .await?;
        let check: String =
            sqlx::query_scalar("SELECT sealed FROM secret_key_check WHERE id = 1").fetch_one(db.writer()).await?;
        opens(secrets, &check)?;
    }
    let mut sealed = 0;
    for (id, key) in stored.iter().filter(|(_, k)| !SecretBox::is_sealed(k)) {
        agents::replace_stored_key(db, id, key, &secrets.seal(key.trim())).await?;
        sealed += 1;
    }
    Ok(sealed)
}

fn opens(secrets: &SecretBox, sealed: &str) -> Result<(), CredentialsError> {
    match secrets.open(sealed) {
        Ok(text) if text == CHECK => Ok(()),
        Ok(_) | Err(SecretError::WrongKey | SecretError::Unknown | SecretError::BadKey) => {
            Err(CredentialsError::WrongKey)
        }
    }
}
