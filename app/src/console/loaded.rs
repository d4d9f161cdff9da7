//! The frame every console page puts around what it loads: the loading line while a server
//! function answers, the page itself when it did, and [`Failure`] when it refused or failed.

use leptos::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::ConsoleError;

/// Shows `resource` through `children` once it has loaded (`<Loaded resource let:value>`), the
/// loading line until then, and [`Failure`] when the call failed. While it reloads, the last
/// view stays.
#[component]
pub fn Loaded<T, F, V>(
    /// What the page loads.
    resource: Resource<Result<T, ConsoleError>>,
    /// The view of the loaded value.
    children: F,
) -> impl IntoView
where
    T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
    F: Fn(T) -> V + Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    view! {
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || {
                let children = children.clone();
                Suspend::new(async move {
                    match resource.await {
                        Ok(value) => children(value).into_any(),
                        Err(error) => view! { <Failure error /> }.into_any(),
                    }
                })
            }}
        </Transition>
    }
}

/// An error line for a refused or failed call.
#[component]
pub fn Failure(error: ConsoleError) -> impl IntoView {
    let text = match error {
        ConsoleError::Forbidden => "Your role may not see this page.".to_owned(),
        other => other.to_string(),
    };
    view! { <p class="c-error" role="alert">{text}</p> }
}
