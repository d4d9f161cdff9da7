//! Agents and visitors as requests find them: by public key, id or token, each kept a short
//! while in memory so that a busy conversation does not read them for every message.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Engine;
use crate::store::DbError;
use crate::store::agents::{self, Agent};
use crate::store::visitors::{self, Visitor};

/// How often a visitor token's `last_seen_at` is moved forward while it is used.
const TOUCH_EVERY_MS: i64 = 60_000;

struct Cached<T> {
    value: T,
    at: Instant,
}

/// A small time-bounded cache (agents by key, visitors by token).
pub(super) struct TtlCache<T> {
    ttl: Duration,
    map: Mutex<HashMap<String, Cached<T>>>,
}

impl<T: Clone> TtlCache<T> {
    pub(super) fn new(ttl: Duration) -> Self {
        TtlCache { ttl, map: Mutex::new(HashMap::new()) }
    }

    fn get(&self, key: &str) -> Option<T> {
        let map = self.map.lock().ok()?;
        map.get(key).filter(|c| c.at.elapsed() < self.ttl).map(|c| c.value.clone())
    }

    fn put(&self, key: &str, value: T) {
        if let Ok(mut map) = self.map.lock() {
            if map.len() > 50_000 {
                map.clear();
            }
            map.insert(key.to_owned(), Cached { value, at: Instant::now() });
        }
    }

    /// Forgets the entries whose value `forget` picks.
    pub(super) fn forget(&self, forget: impl Fn(&T) -> bool) {
        if let Ok(mut map) = self.map.lock() {
            map.retain(|_, c| !forget(&c.value));
        }
    }

    pub(super) fn clear(&self) {
        if let Ok(mut map) = self.map.lock() {
            map.clear();
        }
    }
}

impl Engine {
    /// An agent by its public key (cached briefly).
    pub async fn agent_by_key(&self, key: &str) -> Result<Option<Arc<Agent>>, DbError> {
        if let Some(hit) = self.0.agents.get(key) {
            return Ok(hit);
        }
        let agent = agents::by_public_key(&self.0.db, key).await?.map(Arc::new);
        self.0.agents.put(key, agent.clone());
        Ok(agent)
    }

    /// An agent by its id (cached briefly, beside the keys).
    pub async fn agent_by_id(&self, id: &str) -> Result<Option<Arc<Agent>>, DbError> {
        // Public keys are lower-case letters, digits and dashes: `#` cannot clash with one.
        let cache_key = format!("#{id}");
        if let Some(hit) = self.0.agents.get(&cache_key) {
            return Ok(hit);
        }
        let agent = agents::by_id(&self.0.db, id).await?.map(Arc::new);
        self.0.agents.put(&cache_key, agent.clone());
        Ok(agent)
    }

    /// Forget cached agents (after an edit).
    pub fn agents_changed(&self) {
        self.0.agents.clear();
    }

    /// The visitor a bearer token belongs to (cached briefly).
    /// The visitor holding `token`; `None` for an unknown, revoked or idle-expired token (unused
    /// for [`super::EngineSettings::visitor_idle`]). Use keeps a token alive: its `last_seen_at` is
    /// moved forward at most once a minute.
    pub async fn visitor_by_token(&self, token: &str) -> Result<Option<Visitor>, DbError> {
        let now = self.now_ms();
        let idle_ms = i64::try_from(self.0.settings.visitor_idle.as_millis()).unwrap_or(i64::MAX);
        // A cached visitor seen in the last minute; past that the database is asked again (for a
        // revocation by another process, the idle time, and to mark the token as used).
        if let Some(hit) = self.0.visitors.get(token)
            && now.saturating_sub(hit.last_seen_at) < TOUCH_EVERY_MS.min(idle_ms)
        {
            return Ok(Some(hit));
        }
        let Some(mut visitor) = visitors::by_token(&self.0.db, token).await? else { return Ok(None) };
        if visitor.revoked_at.is_some() || now.saturating_sub(visitor.last_seen_at) > idle_ms {
            return Ok(None);
        }
        if now - visitor.last_seen_at >= TOUCH_EVERY_MS {
            visitors::touch(&self.0.db, &visitor.token_id, now).await?;
            visitor.last_seen_at = now;
        }
        self.0.visitors.put(token, visitor.clone());
        Ok(Some(visitor))
    }

    /// Revokes a visitor's token at once (cached tokens are forgotten); `false` when there is no
    /// such visitor or it was revoked before.
    pub async fn revoke_visitor(&self, visitor_id: &str) -> Result<bool, DbError> {
        let done = visitors::revoke(&self.0.db, visitor_id, self.now_ms()).await?;
        self.0.visitors.forget(|v| v.id == visitor_id);
        Ok(done)
    }

    /// Creates a visitor and returns it with its token.
    pub async fn create_visitor(
        &self,
        agent: &Agent,
        host_origin: Option<&str>,
        client: &visitors::ClientFacts,
    ) -> Result<(Visitor, String), DbError> {
        let token = visitors::new_token();
        let visitor = visitors::create(&self.0.db, &agent.id, &token, host_origin, client, self.now_ms()).await?;
        Ok((visitor, token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An identify or sign-out forgets one token's entry; the others stay cached.
    #[test]
    fn forgetting_one_entry_keeps_the_others() {
        let cache: TtlCache<(String, u32)> = TtlCache::new(Duration::from_secs(60));
        cache.put("token-a", ("row-a".into(), 1));
        cache.put("token-b", ("row-b".into(), 2));
        cache.forget(|(row, _)| row == "row-a");
        assert_eq!(cache.get("token-a"), None);
        assert_eq!(cache.get("token-b"), Some(("row-b".into(), 2)));
    }
}
