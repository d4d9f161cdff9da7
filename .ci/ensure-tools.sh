#!/usr/bin/env bash
# Installs the build tools Parley needs, once, and puts them on PATH. Sourced by run.sh and
# test.sh; quick when everything is already installed.
#   - the wasm32 target,
#   - wasm-bindgen-cli at the version in Cargo.lock,
#   - wasm-opt from npm's binaryen@132, first on PATH (Debian's binaryen 108 breaks hydration),
#   - esbuild and lightningcss's command line from npm.
# Not cargo-leptos: .ci/build-app.sh builds what `cargo leptos build --release` does without it
# (installing it takes 26 minutes on 2 cores). For `cargo leptos watch` while developing, install
# it yourself: `cargo install cargo-leptos --version 0.3.10 --locked` (0.3.11 needs rustc 1.96).
set -euo pipefail

# Each step is stamped with the minutes and seconds since the calling script started ($SECONDS),
# so a slow run's log shows where the time went.
say() { printf '\033[1;34m==>\033[0m [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

PARLEY_TOOLS_DIR="${PARLEY_TOOLS_DIR:-$HOME/.cache/parley/tools}"
export PATH="$HOME/.cargo/bin:$PATH"

command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
# rust-toolchain.toml pins the toolchain; say so plainly if another one answers.
want_rustc="$(sed -n 's/^channel = "\(.*\)"$/\1/p' "$(dirname "${BASH_SOURCE[0]}")/../rust-toolchain.toml")"
if ! rustc -V 2>/dev/null | grep -q "^rustc ${want_rustc} "; then
  echo "rust-toolchain.toml asks for Rust ${want_rustc}; this is $(rustc -V 2>&1)." >&2
  echo "Install it (rustup toolchain install ${want_rustc}) or, if you mean to move, change rust-toolchain.toml." >&2
  exit 1
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wbg_version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$root/Cargo.lock")"
if ! wasm-bindgen --version 2>/dev/null | grep -q " ${wbg_version}\$"; then
  say "installing wasm-bindgen-cli ${wbg_version}"
  # Not --locked: its lock file wants a crate version the registry no longer has.
  cargo install wasm-bindgen-cli --version "$wbg_version"
fi

binaryen_dir="$PARLEY_TOOLS_DIR/binaryen-132"
if [ ! -x "$binaryen_dir/node_modules/.bin/wasm-opt" ]; then
  if ! command -v npm >/dev/null; then
    say "installing Node.js and npm"
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  fi
  say "installing wasm-opt (binaryen@132 from npm)"
  mkdir -p "$binaryen_dir"
  npm install --prefix "$binaryen_dir" --no-audit --no-fund --silent binaryen@132
fi
export PATH="$binaryen_dir/node_modules/.bin:$PATH"

# The app bundle's JavaScript and stylesheet are minified by esbuild and lightningcss's command
# line (.ci/build-app.sh), both from npm with prebuilt binaries (no compile).
web_dir="$PARLEY_TOOLS_DIR/web-minify"
if [ ! -x "$web_dir/node_modules/.bin/esbuild" ] || [ ! -x "$web_dir/node_modules/.bin/lightningcss" ]; then
  say "installing esbuild@0.28.2 and lightningcss-cli@1.33.0 (npm)"
  mkdir -p "$web_dir"
  npm install --prefix "$web_dir" --no-audit --no-fund --silent esbuild@0.28.2 lightningcss-cli@1.33.0
fi
export PATH="$web_dir/node_modules/.bin:$PATH"
