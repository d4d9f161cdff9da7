//! Search (issue 43, part 4): the conversations an operator may see whose messages, private
//! notes or leads hold every word of a query, in Chinese or English (`docs/inbox.md`, "Search").

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
use crate::console::types::{Page, SearchResult};

/// One page of the conversations matching `q` that the asking user may see, latest match first.
#[server]
pub async fn search(q: String, #[server(default)] page: i64) -> Result<Page<SearchResult>, ConsoleError> {
    use super::paging::Paging;
    use crate::console::types::SearchHit;
    use parley_engine::engine::search::SearchError;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let paging = Paging::new(page);
    let (found, total) =
        state.engine.search(&user, &q, paging.offset(), paging.limit()).await.map_err(|e| match e {
            SearchError::Refused(why) => ConsoleError::invalid("q", why),
            SearchError::Db(e) => ConsoleError::from(e),
        })?;
    // Byte ranges become character offsets (what a browser counts in).
    let at_char = |text: &str, byte: usize| u32::try_from(text[..byte].chars().count()).unwrap_or(u32::MAX);
    let items = found
        .into_iter()
        .map(|f| SearchResult {
            conversation_id: f.conversation.conversation_id,
            agent_name: f.conversation.agent_name,
            status: f.conversation.status,
            last_at: f.conversation.last_at,
            matches: f.conversation.hits,
            hits: f
                .hits
                .into_iter()
                .map(|h| SearchHit {
                    marks: h
                        .snippet
                        .marks
                        .iter()
                        .map(|&(a, b)| (at_char(&h.snippet.text, a), at_char(&h.snippet.text, b)))
                        .collect(),
                    snippet: h.snippet.text,
                    kind: h.kind,
                    at: h.at,
                })
                .collect(),
        })
        .collect();
    Ok(paging.of(items, total))
}
