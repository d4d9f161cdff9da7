#!/usr/bin/env bash
# Builds the chat panel's own browser bundle (crate `parley-embed`, the panel without the
# console) into target/widget/ (served at /widget/; PARLEY_WIDGET_DIR): .ci/wasm-small-cargo.sh,
# wasm-bindgen, wasm-opt -Oz, the glue and the panel's part of the stylesheet minified
# (.ci/minify.sh), content-hashed names, a manifest the server reads, brotli and gzip copies.
# run.sh and test.sh call it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wasm-bindgen >/dev/null || ! command -v wasm-opt >/dev/null \
  || ! command -v esbuild >/dev/null || ! command -v lightningcss >/dev/null; then
  source .ci/ensure-tools.sh
fi
# Its own target directory, so these flags never make cargo rebuild the app's bundle
# (.ci/build-app.sh) in target/ or the other way round.
CARGO_TARGET_DIR=target/widget-cargo .ci/wasm-small-cargo.sh -p parley-embed --profile wasm-release
out=target/widget-build
rm -rf "$out"
mkdir -p "$out"
wasm-bindgen target/widget-cargo/wasm32-unknown-unknown/wasm-release/parley_embed.wasm \
  --target web --no-typescript --out-dir "$out"
.ci/wasm-opt-z.sh "$out/parley_embed_bg.wasm" "$out/parley_embed_bg.opt.wasm"
.ci/minify.sh js "$out/parley_embed.js" "$out/parley_embed.min.js"
# The panel's stylesheet: style/main.css down to its "app pages" line (the rest is the console's
# and the app pages'; the console also shows the panel's blocks, so it keeps the whole file).
awk '/^\/\* -+ app pages -+ \*\/$/ { found = 1; exit } { print } END { if (!found) exit 1 }' \
  style/main.css >"$out/panel.css" || { echo "style/main.css: no \"app pages\" line" >&2; exit 1; }
.ci/minify.sh css "$out/panel.css" "$out/panel.min.css"
node .ci/widget-bundle.mjs "$out" target/widget
# The loader host pages embed (/widget.js): minified here (esbuild, keeping it a classic script);
# the server serves this copy when it is there, else the readable source compiled into it. The
# byte budget is checked on every build.
esbuild --minify --log-level=warning widget/src/loader/widget.js --outfile=target/widget/loader.min.js
loader_gz="$(gzip -9c target/widget/loader.min.js | wc -c)"
if [ "$loader_gz" -gt 5120 ]; then
  echo "the loader is ${loader_gz} bytes gzipped: over its budget of 5120" >&2
  exit 1
fi
echo "loader: $(wc -c <target/widget/loader.min.js) bytes, ${loader_gz} gzipped"
# The trigger script the loader adds only for an agent with triggers (/widget-engage.js).
esbuild --minify --log-level=warning widget/src/loader/engage.js --outfile=target/widget/engage.min.js
echo "trigger script: $(wc -c <target/widget/engage.min.js) bytes, $(gzip -9c target/widget/engage.min.js | wc -c) gzipped"
