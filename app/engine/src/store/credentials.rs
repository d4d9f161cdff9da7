//! Provider keys at rest: sealed with the secret key (AES-256-GCM, see
//! [`crate::secret::SecretBox`]) by the agents' store functions. At every start,
//! [`prepare`] proves the secret key is the one the database was sealed with (one check value in
//! `secret_key_check`, and every stored key), seals keys still stored as plain text, and seals
//! again every value sealed before values were bound to their place (`enc:v1:`, no associated
//! data) so that each is bound to its row and column (`enc:v2:`).

use super::{Db, DbError, agents};
use crate::secret::{Place, SecretBox, SecretError};

/// Every sealed column: `(table, column)`; each table's key is `id`.
const SEALED: [(&str, &str); 6] = [
    ("agents", "api_key"),
    ("http_tools", "headers"),
    ("identity_secrets", "secret"),
    ("webhook_endpoints", "secret"),
    ("secret_key_check", "sealed"),
    ("vapid_keys", "private_key"),
];

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
    for (id, key) in stored.iter().filter(|(_, k)| SecretBox::is_sealed(k)) {
        secrets.open(key, agents::key_place(id)).map_err(|_| CredentialsError::WrongKey)?;
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
        .bind(secrets.seal(CHECK, check_place()))
        .bind(now)
        .execute(db.writer())
        .await?;
        let check: String =
            sqlx::query_scalar("SELECT sealed FROM secret_key_check WHERE id = 1").fetch_one(db.writer()).await?;
        opens(secrets, &check)?;
    }
    let mut sealed = 0;
    for (id, key) in stored.iter().filter(|(_, k)| !SecretBox::is_sealed(k)) {
        agents::replace_stored_key(db, id, key, &secrets.seal(key.trim(), agents::key_place(id))).await?;
        sealed += 1;
    }
    for (table, column) in SEALED {
        sealed += bind_to_places(db, secrets, table, column).await?;
    }
    Ok(sealed)
}

/// Seals again, bound to its row and column, every value of `table.column` sealed in the older
/// format; each only if it is unchanged meanwhile. Returns how many were.
async fn bind_to_places(
    db: &Db,
    secrets: &SecretBox,
    table: &'static str,
    column: &'static str,
) -> Result<usize, DbError> {
    // Both names come from `SEALED`, never from input.
    let rows: Vec<(String, String)> =
        sqlx::query_as(&format!("SELECT CAST(id AS TEXT), {column} FROM {table} WHERE {column} LIKE 'enc:v1:%'"))
            .fetch_all(db.writer())
            .await?;
    let mut done = 0;
    for (id, stored) in rows {
        let Some(again) = secrets.reseal(&stored, Place::new(table, column, &id)) else { continue };
        sqlx::query(&format!("UPDATE {table} SET {column} = $3 WHERE CAST(id AS TEXT) = $1 AND {column} = $2"))
            .bind(&id)
            .bind(&stored)
            .bind(&again)
            .execute(db.writer())
            .await?;
        done += 1;
    }
    Ok(done)
}

/// Where the check value is sealed to.
fn check_place() -> Place<'static> {
    Place::new("secret_key_check", "sealed", "1")
}

fn opens(secrets: &SecretBox, sealed: &str) -> Result<(), CredentialsError> {
    match secrets.open(sealed, check_place()) {
        Ok(text) if text == CHECK => Ok(()),
        Ok(_) | Err(SecretError::WrongKey | SecretError::Unknown | SecretError::BadKey) => {
            Err(CredentialsError::WrongKey)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::secret::{Place, SecretBox};
    use crate::store::{agents, testing};

    #[tokio::test]
    async fn values_sealed_before_places_are_bound_to_their_row_at_start() {
        let (db, agent, _dir) = testing::db_with_agent().await;
        let key = SecretBox::from_bytes([9; 32]);
        let db = db.with_secrets(key.clone());
        // A key and a check value as an older version stored them (no associated data).
        sqlx::query("UPDATE agents SET api_key = $2 WHERE id = $1")
            .bind(&agent.id)
            .bind(key.seal_v1("sk-from-before"))
            .execute(db.writer())
            .await
            .unwrap();
        sqlx::query("INSERT INTO secret_key_check (id, sealed, created_at) VALUES (1, $1, 0)")
            .bind(key.seal_v1(super::CHECK))
            .execute(db.writer())
            .await
            .unwrap();
        let opened = agents::by_id(&db, &agent.id).await.unwrap().unwrap();
        assert_eq!(opened.provider.api_key.unwrap().expose(), "sk-from-before", "the older format opens");
        assert_eq!(super::prepare(&db, 1).await.unwrap(), 2, "both sealed again");
        let stored: String = sqlx::query_scalar("SELECT api_key FROM agents WHERE id = $1")
            .bind(&agent.id)
            .fetch_one(db.writer())
            .await
            .unwrap();
        assert!(SecretBox::is_current(&stored), "{stored}");
        assert_eq!(key.open(&stored, Place::new("agents", "api_key", &agent.id)).unwrap(), "sk-from-before");
        assert!(key.open(&stored, Place::new("agents", "api_key", "another")).is_err());
        let check: String = sqlx::query_scalar("SELECT sealed FROM secret_key_check WHERE id = 1")
            .fetch_one(db.writer())
            .await
            .unwrap();
        assert!(SecretBox::is_current(&check), "{check}");
        let opened = agents::by_id(&db, &agent.id).await.unwrap().unwrap();
        assert_eq!(opened.provider.api_key.unwrap().expose(), "sk-from-before");
        assert_eq!(super::prepare(&db, 2).await.unwrap(), 0, "nothing left to do");
    }
}
