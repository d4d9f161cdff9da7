//! `/embed/{key}`: the chat panel inside the widget's iframe.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};
use parley_widget::panel::ChatPanel;

use crate::server_fns::agent_config;

#[component]
pub fn EmbedPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let key = move || params.read().get("key").unwrap_or_default();
    // The server checked this origin against the agent's allowed origins before rendering.
    let host_origin = query.read_untracked().get("origin").map(|o| o.trim_end_matches('/').to_owned());
    let config = Resource::new_blocking(key, agent_config);
    view! {
        <Suspense fallback=|| view! { <div class="pw-loading"></div> }>
            {move || {
                let host_origin = host_origin.clone();
                Suspend::new(async move {
                    match config.await {
                        Ok(config) => view! {
                            <Title text=config.name.clone() />
                            <ChatPanel config host_origin />
                        }
                        .into_any(),
                        Err(_) => view! { <p class="pw-unavailable">"This chat is not available."</p> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}
