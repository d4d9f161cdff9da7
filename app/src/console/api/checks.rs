//! Input checks more than one console server function makes (server only).

use crate::console::error::ConsoleError;
use parley_engine::store::{Db, agents};

/// A name of 1 to 80 characters, trimmed.
pub fn name(name: &str) -> Result<&str, ConsoleError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(ConsoleError::invalid("name", "A name of 1 to 80 characters."));
    }
    Ok(name)
}

/// The id of an agent that exists.
pub async fn agent(db: &Db, id: &str) -> Result<(), ConsoleError> {
    match agents::by_id(db, id).await? {
        Some(_) => Ok(()),
        None => Err(ConsoleError::invalid("agent_id", "Choose an agent.")),
    }
}
