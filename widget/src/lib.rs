//! Everything the visitor's browser needs: the markdown sanitiser, the block renderer registry,
//! the catalogues, the owner's colours, the plain-JS loader and (feature `panel`) the chat panel,
//! over the wire protocol of `parley-protocol` (`widget/protocol/`, re-exported here as
//! [`protocol`] with its SSE parser as [`sse`]).
//!
//! The console and the server use the parts that are plain Rust (blocks, markdown, catalogues,
//! colours, the loader); only the panel's own bundle (`embed/`) turns on `panel`, so they never
//! compile the panel's DOM code nor the browser APIs it calls.

pub mod action;
pub mod blocks;
pub mod colors;
pub mod html;
pub mod i18n;
pub mod icons;
pub mod json;
pub mod markdown;
#[cfg(feature = "panel")]
pub mod panel;

pub use parley_protocol as protocol;
pub use parley_protocol::sse;

/// The plain-JavaScript loader served as `/widget.js`.
pub const LOADER_JS: &str = include_str!("loader/widget.js");

/// The trigger script the loader adds for an agent with triggers, served as `/widget-engage.js`.
pub const ENGAGE_JS: &str = include_str!("loader/engage.js");

#[cfg(test)]
mod tests {
    #[test]
    fn the_loader_knows_every_language_the_panel_speaks() {
        // The loader says "Open chat" in the panel's language and mirrors the launcher for a
        // right-to-left one; the unread count and a teaser's close button are said in it too:
        // its tables have exactly the panel's languages.
        let mut tags: Vec<String> = crate::i18n::Lang::ALL.iter().map(|l| l.tag().to_owned()).collect();
        tags.sort();
        for (name, script) in [("OPEN", super::LOADER_JS), ("UNREAD", super::LOADER_JS), ("DISMISS", super::ENGAGE_JS)]
        {
            let table =
                script.split(&format!("var {name} = {{")).nth(1).and_then(|t| t.split("};").next()).expect(name);
            let mut keys: Vec<String> = table
                .split(',')
                .filter_map(|entry| entry.split(':').next())
                .map(|k| k.trim().trim_matches('\'').to_owned())
                .collect();
            keys.sort();
            assert_eq!(keys, tags, "{name}");
        }
        assert!(
            crate::i18n::Lang::ALL.iter().all(|l| (l.dir() == "rtl") == (l.tag() == "ar")),
            "the loader mirrors for Arabic only"
        );
    }
}
