#!/usr/bin/env bash
# Builds what `cargo leptos build --release` builds, with the same cargo commands and environment,
# without cargo-leptos itself (installing it compiles some 600 crates, swc and lightningcss among
# them: 26 minutes on a 2-core machine, more than a third of a fresh CI run):
#   - target/release/parley: the server (feature `ssr`),
#   - target/site/pkg/parley.{js,wasm,css}: the app's browser bundle (the console, and the
#     hydration of server-rendered pages) and the stylesheet the panel also uses.
# The values are [[workspace.metadata.leptos]]'s in Cargo.toml, which `cargo leptos watch` still
# reads for development: keep the two in step. The steps are cargo-leptos 0.3.10's: the library
# built for wasm32 in its own target directory while the server builds, wasm-bindgen, wasm-opt
# with cargo-leptos's flags, then the JavaScript and the stylesheet minified (here by esbuild and
# lightningcss's command line from npm, where cargo-leptos links swc and lightningcss).
# `--browser-only`: only the browser bundle and the stylesheet. test.sh uses it: `cargo test`
# builds the server binary itself, with the dev-dependencies' features (tempfile, rmcp's client)
# that change shared crates, so a server built here first would be compiled twice (~10 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
browser_only=""
[ "${1:-}" = "--browser-only" ] && browser_only=1
if ! command -v wasm-bindgen >/dev/null || ! command -v wasm-opt >/dev/null \
  || ! command -v esbuild >/dev/null || ! command -v lightningcss >/dev/null; then
  source .ci/ensure-tools.sh
fi

# What cargo-leptos puts in the environment of both cargo builds (Leptos reads some at compile
# time; the same values keep `cargo leptos` and this script from rebuilding each other's work).
export LEPTOS_OUTPUT_NAME=parley LEPTOS_SITE_ROOT=target/site LEPTOS_SITE_PKG_DIR=pkg \
  LEPTOS_SITE_ADDR=127.0.0.1:3000 LEPTOS_RELOAD_PORT=3010 LEPTOS_LIB_DIR=app/hydrate LEPTOS_BIN_DIR=server \
  LEPTOS_JS_MINIFY=true LEPTOS_HASH_FILES=false

# The two builds use different target directories, so they run side by side as under cargo-leptos
# (one links while the other compiles).
# The browser's module is app/hydrate (parley-hydrate, a cdylib that turns on the app's
# `hydrate` feature); the app itself stays an rlib.
cargo build --package=parley-hydrate --lib --target-dir="$PWD/target/front" \
  --target=wasm32-unknown-unknown --profile=wasm-release &
front=$!
server_ok=0
if [ -z "$browser_only" ]; then
  # cargo-leptos adds `--no-default-features --features=ssr` (bin-features). The server's default
  # feature *is* ssr, and naming the features without `default` gives the unit another hash than
  # `cargo build --workspace --tests` gives it: ./run.sh after ./test.sh then rebuilt
  # parley-server (2.5 min). The default features are the same set, under the same name.
  cargo build --package=parley-server --bin=parley --release || server_ok=$?
fi
front_ok=0
wait "$front" || front_ok=$?
[ "$server_ok" -eq 0 ] || { echo "building the server failed" >&2; exit "$server_ok"; }
[ "$front_ok" -eq 0 ] || { echo "building the app's browser bundle failed" >&2; exit "$front_ok"; }

pkg=target/site/pkg
mkdir -p "$pkg"
wasm-bindgen --target=web --no-typescript --out-name=parley --out-dir="$pkg" \
  target/front/wasm32-unknown-unknown/wasm-release/parley_hydrate.wasm
# Leptos's <HydrationScripts> loads `parley.wasm`, not wasm-bindgen's `parley_bg.wasm`.
mv "$pkg/parley_bg.wasm" "$pkg/parley.wasm"
wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int "$pkg/parley.wasm" -o "$pkg/parley.wasm"
.ci/minify.sh js "$pkg/parley.js" "$pkg/parley.min.js"
mv "$pkg/parley.min.js" "$pkg/parley.js"
.ci/minify.sh css style/main.css "$pkg/parley.css"
