#!/usr/bin/env bash
# Builds the chat panel's own browser bundle (crate `parley-embed`, the panel without the
# console) into target/widget/ (served at /widget/; PARLEY_WIDGET_DIR): wasm-bindgen, wasm-opt -Oz, content-hashed names, a
# manifest the server reads, brotli and gzip copies. Run after .ci/build-app.sh (which owns
# target/site/pkg, whose stylesheet the bundle copies). run.sh and test.sh call it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wasm-bindgen >/dev/null || ! command -v wasm-opt >/dev/null; then
  source .ci/ensure-tools.sh
fi
# `--cfg erase_components` (Leptos): every component returns a type-erased view, fewer copies of
# generic code, 7.5 KB less brotli. Its own target directory, so these flags never make cargo
# rebuild the app's bundle (.ci/build-app.sh) in target/ or the other way round.
RUSTFLAGS="--cfg erase_components" CARGO_TARGET_DIR=target/widget-cargo \
  cargo build -p parley-embed --profile wasm-release --target wasm32-unknown-unknown
out=target/widget-build
rm -rf "$out"
mkdir -p "$out"
wasm-bindgen target/widget-cargo/wasm32-unknown-unknown/wasm-release/parley_embed.wasm \
  --target web --no-typescript --out-dir "$out"
.ci/wasm-opt-z.sh "$out/parley_embed_bg.wasm" "$out/parley_embed_bg.opt.wasm"
node .ci/widget-bundle.mjs "$out" target/site target/widget
