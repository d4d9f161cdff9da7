//! The website's signed-in user: `Parley.identify` links this browser to them, `Parley.logout`
//! starts again as a new anonymous visitor. Runs in the browser only.

use wasm_bindgen_futures::spawn_local;

use super::actions::API;
use super::client::{self, ClientError};
use super::model::Panel;
use super::storage;
use crate::protocol::{FollowReturn, Identified, Identify, Returned};

impl Panel {
    /// The website's token for its signed-in user (`Parley.identify`): verified by the server,
    /// which links this browser to the user. Their newest conversation is shown (it may come from
    /// another device); a refused token leaves the panel anonymous.
    pub fn identify(self, user_token: String) {
        self.identifying.set_value(true);
        spawn_local(async move {
            self.identify_now(user_token).await;
            self.identifying.set_value(false);
        });
    }

    async fn identify_now(self, user_token: String) {
        {
            let agent = self.agent.get();
            let mut attempts = 0;
            let identified = loop {
                attempts += 1;
                let token = match self.ensure_token().await {
                    Ok(t) => t,
                    Err(e) => break Err(e),
                };
                let body = Identify { agent: agent.clone(), token: user_token.clone() };
                match client::json::<Identify, Identified>(
                    "POST",
                    &format!("{API}/visitors/identify"),
                    Some(&token),
                    Some(&body),
                )
                .await
                {
                    // A token revoked or expired meanwhile: a new visitor, then again.
                    Err(e) if e.status() == Some(401) && !is_identity_refusal(&e) && attempts < 2 => {
                        storage::remove(&agent, "token");
                        self.token.set_value(None);
                    }
                    other => break other,
                }
            };
            match identified {
                Ok(who) => {
                    if let Some(token) = &who.token {
                        storage::set(&agent, "token", token);
                        self.token.set_value(Some(token.clone()));
                    }
                    let shown = self.conversation.get();
                    self.user.set(Some(who.user.clone()));
                    super::host::post_event(&self, "identified", &serde_json::json!({ "id": who.user.id }));
                    // Show the user's newest conversation unless this one is being written or
                    // is it already.
                    if who.conversation_id.is_some()
                        && who.conversation_id != shown
                        && self.current.get().is_none()
                        && !self.busy.get()
                    {
                        if let Some(id) = &who.conversation_id {
                            storage::set(&agent, "conversation", id);
                        }
                        self.clear();
                        self.show_stored_conversation();
                    } else if who.token.is_some() && shown.is_some() {
                        // The other user's conversation is not this one's to see.
                        self.forget_conversation();
                    }
                }
                Err(e) => {
                    let code = match &e {
                        ClientError::Api { error, .. } => error.error.as_str().to_owned(),
                        ClientError::Network(_) => "network".to_owned(),
                    };
                    super::host::post_event(&self, "identity_error", &serde_json::json!({ "code": code }));
                }
            }
        }
    }

    /// A return mail's link (`#parley-return=…` on the site page): this browser becomes the
    /// visitor the conversation belongs to and shows it. An expired link leaves everything as it
    /// was and says so.
    pub fn follow_return(self, link: String) {
        spawn_local(async move {
            let agent = self.agent.get();
            let body = FollowReturn { agent: agent.clone(), token: link };
            match client::json::<FollowReturn, Returned>("POST", &format!("{API}/visitors/return"), None, Some(&body))
                .await
            {
                Ok(back) => {
                    if self.current.get().is_some() {
                        self.stop();
                    }
                    storage::set(&agent, "token", &back.token);
                    self.token.set_value(Some(back.token));
                    storage::set(&agent, "conversation", &back.conversation_id);
                    self.clear();
                    self.show_stored_conversation();
                    super::host::post_event(
                        &self,
                        "returned",
                        &serde_json::json!({ "conversation": back.conversation_id }),
                    );
                }
                Err(e) => self.notice.set(Some(self.error_text(&e))),
            }
        });
    }

    /// `Parley.logout()`: this browser signs out and starts again as a new anonymous visitor.
    pub fn logout(self) {
        if self.current.get().is_some() {
            self.stop();
        }
        let agent = self.agent.get();
        if let Some(token) = self.token.get() {
            client::fire_and_forget("DELETE", &format!("{API}/visitors/me"), &token);
        }
        storage::remove(&agent, "token");
        self.token.set_value(None);
        self.user.set(None);
        self.forget_conversation();
    }
}

/// A refusal of the website's identity token (as opposed to this browser's own token).
fn is_identity_refusal(e: &ClientError) -> bool {
    matches!(e, ClientError::Api { error, .. } if error.error.as_str().starts_with("identity_"))
}
