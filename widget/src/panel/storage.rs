//! The panel's own storage (the iframe's `localStorage`): the visitor token and the current
//! conversation, per agent. Falls back to nothing when storage is blocked.

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn key(agent: &str, what: &str) -> String {
    format!("parley:v1:{agent}:{what}")
}

pub fn get(agent: &str, what: &str) -> Option<String> {
    storage()?.get_item(&key(agent, what)).ok().flatten().filter(|v| !v.is_empty())
}

pub fn set(agent: &str, what: &str, value: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(&key(agent, what), value);
    }
}

pub fn remove(agent: &str, what: &str) {
    if let Some(s) = storage() {
        let _ = s.remove_item(&key(agent, what));
    }
}
