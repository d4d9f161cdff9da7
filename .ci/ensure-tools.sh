#!/usr/bin/env bash
# Installs the build tools Parley needs, once, and puts them on PATH. Sourced by run.sh and
# test.sh; quick when everything is already installed.
#   - the wasm32 target, cargo-leptos 0.3.10 (0.3.11 needs a newer rustc),
#   - wasm-bindgen-cli at the version in Cargo.lock (cargo-leptos would download it otherwise),
#   - wasm-opt from npm's binaryen@132, first on PATH (Debian's binaryen 108 breaks hydration).
set -euo pipefail

say() { printf '\033[1;34m==>\033[0m %s\n' "$*" >&2; }

PARLEY_TOOLS_DIR="${PARLEY_TOOLS_DIR:-$HOME/.cache/parley/tools}"
export PATH="$HOME/.cargo/bin:$PATH"

command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if ! cargo leptos --version 2>/dev/null | grep -q '0\.3\.10'; then
  say "installing cargo-leptos 0.3.10 (takes a while, once)"
  cargo install cargo-leptos --version 0.3.10 --locked
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
