#!/usr/bin/env bash
# What the panel's bundle would weigh without its views: builds a throwaway crate (in a temporary
# directory) that links only the widget's non-view code — the protocol types read and written
# through the browser's JSON (feature `browser-json`), the SSE parser, the markdown renderer and
# the catalogues — with the bundle's profile and flags (.ci/wasm-small-cargo.sh) and
# `wasm-opt -Oz`, and prints its size raw and brotli-compressed. The panel's own bundle minus
# this is what its views, their DOM calls and its state cost (README, "The widget's weight").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v wasm-bindgen >/dev/null || ! command -v wasm-opt >/dev/null; then
  source "$root/.ci/ensure-tools.sh"
fi
dir=$(mktemp -d /tmp/parley-widget-floor.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src"
cat >"$dir/Cargo.toml" <<EOF
[package]
name = "floor"
version = "0.0.0"
edition = "2024"
[lib]
crate-type = ["cdylib"]
[dependencies]
parley-widget = { path = "$root/widget", features = ["browser-json"] }
wasm-bindgen = "0.2"
[profile.release]
opt-level = "z"
lto = true
codegen-units = 1
panic = "abort"
[workspace]
EOF
cat >"$dir/src/lib.rs" <<'EOF'
use parley_widget::protocol::{LeadForm, PublicAgentConfig, StreamEvent, Transcript};
use parley_widget::{i18n, json, markdown, sse};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub fn config(text: &str, browser: Vec<String>) -> String {
    match json::from_str::<PublicAgentConfig>(text) {
        Ok(c) => {
            let lang = i18n::choose(c.language, &browser);
            let words: String = lang.labels().entries().iter().map(|(_, v)| *v).collect();
            words + &lang.amount(1234, "CNY") + &lang.date(text)
        }
        Err(e) => e,
    }
}

#[wasm_bindgen]
pub fn transcript(text: &str) -> String {
    match json::from_str::<Transcript>(text) {
        Ok(t) => t.messages.iter().map(|m| markdown::render(&m.text)).collect(),
        Err(e) => e,
    }
}

#[wasm_bindgen]
pub fn feed(chunk: &str) -> String {
    let mut out = String::new();
    for f in sse::SseParser::new().feed(chunk) {
        match StreamEvent::parse(f.event.as_deref().unwrap_or(""), &f.data) {
            Ok(Some(StreamEvent::Token(t))) => out.push_str(&t.text),
            Ok(Some(StreamEvent::Block(b))) => out.push_str(&json::to_string(&b)),
            Ok(Some(other)) => out.push_str(other.name()),
            Ok(None) => {}
            Err(e) => out.push_str(&e),
        }
    }
    markdown::render(&out)
}

#[wasm_bindgen]
pub fn lead(text: &str) -> String {
    json::to_string(&LeadForm { message: text.to_owned(), ..LeadForm::default() })
}
EOF
(cd "$dir" && CARGO_TARGET_DIR="$root/target/widget-floor" "$root/.ci/wasm-small-cargo.sh" --release --quiet)
wasm-bindgen "$root/target/widget-floor/wasm32-unknown-unknown/release/floor.wasm" --target web --no-typescript --out-dir "$dir/out"
"$root/.ci/wasm-opt-z.sh" "$dir/out/floor_bg.wasm" "$dir/out/floor.wasm"
node -e '
const fs = require("fs"), z = require("zlib");
const br = (d) => z.brotliCompressSync(d, { params: { [z.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
for (const [what, f] of [["wasm", "floor.wasm"], ["glue", "floor.js"]]) {
  const d = fs.readFileSync(process.argv[1] + "/" + f);
  console.log(`without views, ${what}: ${d.length} bytes, ${br(d)} brotli`);
}' "$dir/out"
