//! The conversation's live stream while the panel shows it (answers resumed after a drop,
//! payments paid, people replying), and the small signals the visitor sends: typing, stop, and
//! stop when the page goes away. Browser only.

use serde::de::IgnoredAny;
use serde_json::Value;
use wasm_bindgen_futures::spawn_local;

use super::actions::{API, sleep_ms};
use super::client::{self, ClientError};
use super::model::Panel;

impl Panel {
    /// Keeps one live stream of the conversation open while the panel shows it: answers resumed
    /// after a drop, payments paid, people replying. Reconnects with `Last-Event-ID`.
    pub fn ensure_following(self) {
        if self.following.get() || self.conversation.get().is_none() {
            return;
        }
        self.following.set_value(true);
        spawn_local(async move {
            self.follow_live().await;
            self.following.set_value(false);
        });
    }

    async fn follow_live(&self) {
        let generation = self.generation.get();
        let mut failures: u32 = 0;
        loop {
            let (Some(conversation), Some(token)) = (self.conversation.get(), self.token.get()) else {
                return;
            };
            if self.generation.get() != generation {
                return;
            }
            let controller = web_sys::AbortController::new().ok();
            let signal = controller.as_ref().map(|c| c.signal());
            let url = format!("{API}/conversations/{conversation}/events");
            let mut received = false;
            let result =
                client::stream("GET", &url, &token, None, Some(self.last_seq.get()), signal.as_ref(), |seq, event| {
                    if self.generation.get() != generation {
                        if let Some(c) = &controller {
                            c.abort();
                        }
                        return;
                    }
                    received = true;
                    self.on_event(seq, event);
                })
                .await;
            if self.generation.get() != generation {
                return;
            }
            if let Err(ClientError::Api { .. }) = result {
                return;
            }
            if self.current.get().is_some() {
                self.offline.set(true);
            }
            failures = if received { 1 } else { (failures + 1).min(6) };
            sleep_ms(500 * 2u32.pow(failures - 1)).await;
        }
    }

    /// Tells the person handling the conversation that the visitor is typing (at most every 3 s).
    pub fn typed(self) {
        if self.human.get().is_none() {
            return;
        }
        let now = js_sys::Date::now();
        if now - self.typing_sent.get() < 3000.0 {
            return;
        }
        self.typing_sent.set_value(now);
        let (Some(conversation), Some(token)) = (self.conversation.get(), self.token.get()) else {
            return;
        };
        spawn_local(async move {
            let url = format!("{API}/conversations/{conversation}/typing");
            let _ = client::json::<Value, IgnoredAny>(
                "POST",
                &url,
                Some(&token),
                Some(&serde_json::json!({"active": true})),
            )
            .await;
        });
    }

    /// Asks the server to stop the answer being written.
    pub fn stop(self) {
        let (Some(conversation), Some(token)) = (self.conversation.get(), self.token.get()) else {
            return;
        };
        spawn_local(async move {
            let url = format!("{API}/conversations/{conversation}/stop");
            if let Err(e) = client::json::<(), IgnoredAny>("POST", &url, Some(&token), None).await {
                self.notice.set(Some(self.error_text(&e)));
            }
        });
    }

    /// The page is going away: stop the answer being written with a request that outlives the page.
    pub fn leave(self) {
        let (Some(conversation), Some(token), Some(_)) =
            (self.conversation.get(), self.token.get(), self.current.get())
        else {
            return;
        };
        client::fire_and_forget("POST", &format!("{API}/conversations/{conversation}/stop"), &token);
    }
}
