//! One answer per server render for data that changes while a page is rendered.
//!
//! While the server renders a page, Leptos renders a `Suspense`'s children more than once (the
//! console's layout waits for the signed-in user in one), and each rendering makes its own
//! resources, which fetch again. The browser hydrates the last rendering's HTML with the first
//! rendering's data. When the data changed in between — a source's page loaded while its crawl
//! runs — the two differ and hydration stops the page (a panic in the browser; seen as a page
//! list that no filter changes). [`once`] gives every rendering of one request the same answer:
//! the first fetch of a key is shared by the later ones. In the browser it is the fetch itself.

use std::future::Future;
use std::pin::Pin;

/// A fetch's future, the same type in the server's and the browser's build.
pub type Fetch<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

#[cfg(feature = "ssr")]
mod server {
    use std::any::Any;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use futures::future::{FutureExt, Shared};

    use super::Fetch;

    /// The fetches of one server render, by key.
    #[derive(Clone, Default)]
    pub struct Answers(Arc<Mutex<HashMap<String, Box<dyn Any + Send + Sync>>>>);

    impl Answers {
        pub fn share<T: Clone + Send + Sync + 'static>(&self, key: String, fetch: Fetch<T>) -> Fetch<T> {
            let mut map = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            // The key names the type too, so an entry always downcasts; were it not to, the
            // fetch runs on its own.
            let key = format!("{key} as {}", std::any::type_name::<T>());
            if let Some(first) = map.get(&key).and_then(|b| b.downcast_ref::<Shared<Fetch<T>>>()) {
                return Box::pin(first.clone());
            }
            let shared = fetch.shared();
            map.insert(key, Box::new(shared.clone()));
            Box::pin(shared)
        }
    }
}

/// Called once at the root of the app: on the server, the fetches [`once`] shares live as
/// long as the request's render.
pub fn provide() {
    #[cfg(feature = "ssr")]
    leptos::prelude::provide_context(server::Answers::default());
}

/// `fetch`, answered once per server render for `key` (name what is fetched and its
/// arguments). Call it inside a resource's fetcher, where the render's context is current.
pub fn once<T, F>(key: String, fetch: F) -> Fetch<T>
where
    T: Clone + Send + Sync + 'static,
    F: Future<Output = T> + Send + 'static,
{
    #[cfg(feature = "ssr")]
    if let Some(answers) = leptos::prelude::use_context::<server::Answers>() {
        return answers.share(key, Box::pin(fetch));
    }
    let _ = key;
    Box::pin(fetch)
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use leptos::prelude::Owner;

    use super::*;

    /// A fetch that counts how often it ran and answers `value`.
    fn fetch(runs: &Arc<AtomicUsize>, value: u32) -> impl Future<Output = u32> + Send + 'static {
        let runs = Arc::clone(runs);
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            value
        }
    }

    #[test]
    fn every_rendering_of_one_render_gets_the_first_answer_of_a_key() {
        let runs = Arc::new(AtomicUsize::new(0));
        let owner = Owner::new();
        let (first, again, other) = owner.with(|| {
            provide();
            // A second rendering asks for the same list after it changed (2 where it was 1).
            (
                once("list a".into(), fetch(&runs, 1)),
                once("list a".into(), fetch(&runs, 2)),
                once("list b".into(), fetch(&runs, 3)),
            )
        });
        let answers = futures::executor::block_on(async { (again.await, first.await, other.await) });
        assert_eq!(answers, (1, 1, 3));
        assert_eq!(runs.load(Ordering::SeqCst), 2, "the repeated key was fetched again");
    }

    #[test]
    fn outside_a_render_each_fetch_runs() {
        let runs = Arc::new(AtomicUsize::new(0));
        let (first, again) =
            Owner::new().with(|| (once("list a".into(), fetch(&runs, 1)), once("list a".into(), fetch(&runs, 2))));
        let answers = futures::executor::block_on(async { (first.await, again.await) });
        assert_eq!(answers, (1, 2));
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }
}
