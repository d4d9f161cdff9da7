//! The engine's tool registry: the tools Parley ships and those the owner defined
//! (`http_tools`), rebuilt after an edit here and when another replica changed them; the experts
//! are refreshed beside them.

use std::sync::Arc;

use super::Engine;
use super::tools::registry::Registry;
use crate::store::{DbError, experts, http_tools};

impl Engine {
    /// Every tool: Parley's and the owner's.
    pub fn registry(&self) -> Registry {
        match self.0.registry.read() {
            Ok(r) => r.0.clone(),
            Err(poisoned) => poisoned.into_inner().0.clone(),
        }
    }

    /// Reads the owner's tools and builds the registry anew (at start, after an edit, and when
    /// another replica changed them). A stored tool that does not fit (its name was taken by a
    /// tool Parley ships since) is left out and logged.
    pub async fn reload_tools(&self) -> Result<(), DbError> {
        let version = http_tools::version(&self.0.db).await?;
        self.reload_tools_at(version).await
    }

    /// [`Engine::reload_tools`] with the fingerprint already read.
    async fn reload_tools_at(&self, version: (i64, i64)) -> Result<(), DbError> {
        let mut registry = self.0.builtin.clone();
        for def in http_tools::list(&self.0.db).await? {
            let name = def.name.clone();
            let tool = super::tools::http_tool::HttpTool::new(def, self.0.outbound.clone(), self.0.settings.outbound);
            match registry.with(vec![Arc::new(tool)]) {
                Ok(more) => registry = more,
                Err(e) => tracing::warn!(tool = %name, error = %e, "an owner-defined tool is left out"),
            }
        }
        if let Ok(mut slot) = self.0.registry.write() {
            *slot = (registry, Some(version));
        }
        Ok(())
    }

    /// [`Engine::reload_tools`] when the stored tools changed since they were read, and the
    /// experts likewise (an edit on another replica); true when either was read again.
    pub async fn refresh_tools_if_changed(&self) -> Result<bool, DbError> {
        let version = http_tools::version(&self.0.db).await?;
        let current = self.0.registry.read().ok().and_then(|r| r.1);
        let tools_changed = current != Some(version);
        if tools_changed {
            self.reload_tools_at(version).await?;
        }
        let experts_version = experts::version(&self.0.db).await?;
        let experts_changed = self.0.experts.version() != Some(experts_version);
        if experts_changed {
            self.0.experts.replace_at(experts::list(&self.0.db).await?, experts_version);
        }
        Ok(tools_changed || experts_changed)
    }
}
