//! The subcommands other than `serve`, `bench` and `fake-upstream`: one file per group.

pub mod accounts;
pub mod content;
pub mod mcp;

use parley_app::server::store::Db;
use parley_server::Config;

/// Opens the configured database (making the data directory of a default SQLite file first).
pub async fn open_db(config: &Config) -> anyhow::Result<Db> {
    if config.database_url.is_none() {
        std::fs::create_dir_all(&config.data_dir)?;
    }
    Ok(Db::connect(&config.database_url()).await?)
}
