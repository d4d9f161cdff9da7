#!/usr/bin/env bash
# Builds the chat panel's own browser bundle (crate `parley-embed`, the panel without the
# console) into target/widget/ (served at /widget/; PARLEY_WIDGET_DIR): wasm-bindgen, wasm-opt -Oz, content-hashed names, a
# manifest the server reads, brotli and gzip copies. Run after `cargo leptos build` (which owns
# target/site/pkg, whose stylesheet the bundle copies). run.sh and test.sh call it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wasm-bindgen >/dev/null || ! command -v wasm-opt >/dev/null; then
  source .ci/ensure-tools.sh
fi
cargo build -p parley-embed --profile wasm-release --target wasm32-unknown-unknown
out=target/widget-build
rm -rf "$out"
mkdir -p "$out"
wasm-bindgen target/wasm32-unknown-unknown/wasm-release/parley_embed.wasm \
  --target web --no-typescript --out-dir "$out"
wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-reference-types --enable-multivalue \
  "$out/parley_embed_bg.wasm" -o "$out/parley_embed_bg.opt.wasm"
node .ci/widget-bundle.mjs "$out" target/site target/widget
