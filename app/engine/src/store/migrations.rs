//! The schema's migrations, compiled into the binary from `migrations/` (the files stay the
//! source of truth). sqlx's `migrate!` macro would do the same, but it needs sqlx's `macros`
//! feature, which builds tokio, the sqlx crates and SQLite's C library a second time for the
//! compiler's own host: minutes of every cold build for one list. `Migration::new` computes the
//! same checksum (SHA-384 of the SQL) and the description is derived as sqlx derives it, so a
//! database migrated by either accepts the other. A test checks the list against the folder.

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};

macro_rules! migration {
    ($version:literal, $file:literal) => {
        ($version, $file, include_str!(concat!("../../../../migrations/", $file)))
    };
}

/// Every migration: version, file name, SQL. Add a new file here as well as in `migrations/`.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    migration!(1, "0001_core.sql"),
    migration!(2, "0002_consulting.sql"),
    migration!(3, "0003_console.sql"),
    migration!(4, "0004_mcp_tokens.sql"),
    migration!(5, "0005_guards.sql"),
    migration!(6, "0006_experts.sql"),
    migration!(7, "0007_compaction.sql"),
    migration!(8, "0008_attachments.sql"),
    migration!(9, "0009_payments.sql"),
    migration!(10, "0010_credentials.sql"),
    migration!(11, "0011_spend.sql"),
    migration!(12, "0012_look.sql"),
    migration!(13, "0013_leases.sql"),
    migration!(14, "0014_max_tokens.sql"),
    migration!(15, "0015_mcp_modules.sql"),
    migration!(16, "0016_assessment_facts.sql"),
    migration!(17, "0017_expert_tool_calls.sql"),
    migration!(18, "0018_jobs.sql"),
    migration!(19, "0019_spend_days.sql"),
    migration!(20, "0020_turn_slots.sql"),
    migration!(21, "0021_knowledge_topics.sql"),
    migration!(22, "0022_http_tools.sql"),
    migration!(23, "0023_expert_copies.sql"),
    migration!(24, "0024_identity.sql"),
    migration!(25, "0025_audit_log.sql"),
    migration!(26, "0026_webhooks.sql"),
    migration!(27, "0027_answer_loop.sql"),
    migration!(28, "0028_business_hours.sql"),
    migration!(29, "0029_mail.sql"),
    migration!(30, "0030_identity_replay.sql"),
    migration!(31, "0031_session_lifetime.sql"),
    migration!(32, "0032_parked_images.sql"),
    migration!(33, "0033_alerts.sql"),
    migration!(34, "0034_transcript_mail.sql"),
    migration!(35, "0035_agent_domain.sql"),
    migration!(36, "0036_knowledge_sources.sql"),
    migration!(37, "0037_team_inbox.sql"),
    migration!(38, "0038_operator_push.sql"),
    migration!(39, "0039_inbox_search.sql"),
    migration!(40, "0040_copilot.sql"),
    migration!(41, "0041_contacts.sql"),
    migration!(42, "0042_engage.sql"),
    migration!(43, "0043_return_mail.sql"),
    migration!(44, "0044_agent_versions.sql"),
    migration!(45, "0045_answer_tests.sql"),
    migration!(46, "0046_reports.sql"),
];

/// The migrator `Db::connect` runs against a fresh or older database.
pub fn migrator() -> Migrator {
    let migrations = MIGRATIONS.iter().map(|&(version, file, sql)| migration(version, file, sql)).collect::<Vec<_>>();
    Migrator { migrations: Cow::Owned(migrations), ..Migrator::DEFAULT }
}

/// One migration as sqlx's file source reads it: `<version>_<description>.sql`, underscores in
/// the description read as spaces, `-- no-transaction` at the top opting out of a transaction.
fn migration(version: i64, file: &str, sql: &'static str) -> Migration {
    let name = file.split_once('_').map_or(file, |(_, rest)| rest);
    let description = name.trim_end_matches(".sql").replace('_', " ");
    Migration::new(
        version,
        Cow::Owned(description),
        MigrationType::Simple,
        Cow::Borrowed(sql),
        sql.starts_with("-- no-transaction"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file in `migrations/` is in the list, in order, with the version its name gives.
    #[test]
    fn the_list_is_the_folder() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|f| f.ends_with(".sql"))
            .collect();
        files.sort();
        let listed: Vec<&str> = MIGRATIONS.iter().map(|m| m.1).collect();
        assert_eq!(files, listed, "migrations/ and store/migrations.rs disagree: list every new file");
        for (version, file, _) in MIGRATIONS {
            assert_eq!(file.split('_').next().unwrap().parse::<i64>().unwrap(), *version, "{file}");
        }
    }

    #[test]
    fn descriptions_and_checksums_are_sqlx_s() {
        let m = migration(27, "0027_answer_loop.sql", "SELECT 1;");
        assert_eq!(m.description, "answer loop");
        assert_eq!(m.version, 27);
        assert_eq!(m.checksum.len(), 48, "SHA-384");
        assert!(!m.no_tx);
        assert!(migration(1, "0001_x.sql", "-- no-transaction\nSELECT 1;").no_tx);
        assert_eq!(migrator().iter().count(), MIGRATIONS.len());
    }
}
