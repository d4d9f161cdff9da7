//! The layering the compiler cannot see inside one crate, checked on the sources: the store (and
//! the leaf modules below it) import nothing from above, and no two sibling modules import each
//! other, directly or round a longer loop. Sibling modules are the crate's top-level modules and
//! the engine's children (a file or a folder each); a module's own children and its parent do not
//! count (a parent declares its children; the engine's files all add methods to `Engine`). The
//! same cycle check runs over the app, the server and the widget crates. Paths written with
//! `crate::` and `super::` count; comments and `#[cfg(test)]` modules do not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What the store and the leaves may import: themselves, and each other's leaves.
const BELOW_THE_ENGINE: &[&str] = &["store", "lang", "mail_text", "secret", "demo_data"];

/// Module path of a source file (`engine/turn/mod.rs` → `["engine", "turn"]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The sibling group a module belongs to (see the module's documentation).
fn group(path: &[String]) -> String {
    match path {
        [] => String::new(),
        [engine, child, ..] if engine == "engine" => format!("engine::{child}"),
        [first, ..] => first.clone(),
    }
}

/// The code of a file without comments and without its `#[cfg(test)] mod …` (tests come last).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default();
    text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// Every module a file's code names with `crate::` or `super::` (resolved to a module path).
fn references(module: &[String], code: &str) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    let starts = code.match_indices("crate::").chain(code.match_indices("super::")).map(|(at, _)| at);
    for start in starts {
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let path: String =
            code[start..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        let mut target = module.to_vec();
        for part in path.split("::").filter(|p| !p.is_empty()) {
            match part {
                "crate" => target.clear(),
                "super" => {
                    target.pop();
                }
                p if p.starts_with(|c: char| c.is_ascii_lowercase()) => target.push(p.to_owned()),
                _ => break,
            }
        }
        found.insert(target);
    }
    found
}

/// `(from group, to group) → the files that make the edge`, over every `.rs` file under `src`.
fn edges(src: &Path) -> BTreeMap<(String, String), BTreeSet<PathBuf>> {
    let mut files = vec![src.to_path_buf()];
    let mut edges = BTreeMap::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let module = module_path(src, &path);
        let text = std::fs::read_to_string(&path).unwrap();
        for target in references(&module, &code(&text)) {
            let (from, to) = (group(&module), group(&target));
            if from != to && !from.is_empty() && !to.is_empty() {
                edges.entry((from, to)).or_insert_with(BTreeSet::new).insert(path.clone());
            }
        }
    }
    edges
}

/// The groups on a loop, if any (a depth-first search for a back edge).
fn cycle(edges: &BTreeMap<(String, String), BTreeSet<PathBuf>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        next: &BTreeMap<&str, Vec<&str>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> bool {
        if let Some(at) = stack.iter().position(|n| n == node) {
            stack.drain(..at);
            return true;
        }
        if done.contains(node) {
            return false;
        }
        stack.push(node.to_owned());
        for n in next.get(node).into_iter().flatten() {
            if visit(n, next, stack, done) {
                return true;
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        false
    }
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    // The engine's root declares its children and they add to `Engine`: not a sibling.
    for (from, to) in edges.keys().filter(|(from, to)| from != "engine" && to != "engine") {
        next.entry(from).or_default().push(to);
    }
    let mut done = BTreeSet::new();
    next.keys().find_map(|start| {
        let mut stack = Vec::new();
        visit(start, &next, &mut stack, &mut done).then_some(stack)
    })
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Imports from below the engine to anything above it.
fn from_below(edges: &BTreeMap<(String, String), BTreeSet<PathBuf>>) -> Vec<String> {
    let below = |g: &str| BELOW_THE_ENGINE.contains(&g);
    edges
        .iter()
        .filter(|((from, to), _)| below(from) && !below(to))
        .map(|((from, to), files)| format!("{from} imports {to} in {files:?}"))
        .collect()
}

#[test]
fn the_store_and_the_leaves_import_nothing_from_above() {
    let wrong = from_below(&edges(&repo().join("app/engine/src")));
    assert!(wrong.is_empty(), "the store and the leaves sit below the engine:\n{}", wrong.join("\n"));
}

#[test]
fn no_import_cycle_between_sibling_modules() {
    for crate_src in ["app/engine/src", "app/src", "server/src", "widget/src"] {
        let edges = edges(&repo().join(crate_src));
        if let Some(loop_) = cycle(&edges) {
            let files: Vec<String> = loop_
                .iter()
                .zip(loop_.iter().cycle().skip(1))
                .map(|(a, b)| format!("{a} -> {b}: {:?}", edges[&(a.clone(), b.clone())]))
                .collect();
            panic!("{crate_src}: an import cycle:\n{}", files.join("\n"));
        }
    }
}

/// The checker itself finds what it must: a planted loop and a planted import from above.
#[test]
fn the_checker_finds_a_planted_cycle_and_a_store_import_of_the_engine() {
    let dir = std::env::temp_dir().join(format!("parley-layers-{}", std::process::id()));
    let write = |file: &str, text: &str| {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod engine;\npub mod store;\n");
    write("engine/mod.rs", "pub mod hub;\npub mod writer;\n");
    write("engine/hub/mod.rs", "use super::super::engine::writer::Writer; // a comment: crate::store\n");
    write("engine/writer/rows.rs", "use super::super::hub::Frame;\n#[cfg(test)]\nmod tests { use crate::auth; }\n");
    write("store/hours.rs", "use crate::engine::hours::BusinessHours;\n");
    let found = edges(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let keys: Vec<(&str, &str)> = found.keys().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    // Not the comment, not the test module's import, not `lib.rs` declaring its modules.
    assert_eq!(
        keys,
        [("engine::hub", "engine::writer"), ("engine::writer", "engine::hub"), ("store", "engine::hours")]
    );
    let mut loop_ = cycle(&found).unwrap();
    loop_.sort();
    assert_eq!(loop_, ["engine::hub", "engine::writer"]);
    assert_eq!(from_below(&found).len(), 1);
    // The engine's root counts for the store rule (`Engine` itself), not for cycles.
    let root = references(&["store".into(), "x".into()], "fn f(e: &crate::engine::Engine) {}");
    assert!(root.contains(&vec!["engine".to_owned()]));
}
