//! The subcommands other than `serve`, `bench` and `fake-upstream`: one file per group.

pub mod accounts;
pub mod answer_tests;
pub mod content;
pub mod mcp;
pub mod people;
pub mod reach;
pub mod sources;

use parley_engine::store::Db;
use parley_server::Config;

/// Opens the configured database with its secret key (see [`parley_server::open_database`]).
pub async fn open_db(config: &Config) -> anyhow::Result<Db> {
    use parley_engine::engine::clock::{Clock, SystemClock};
    parley_server::open_database(config, SystemClock.now_ms()).await
}
