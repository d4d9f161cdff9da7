#!/usr/bin/env bash
# `cargo build` for a browser bundle whose bytes every visitor pays (.ci/build-widget.sh, and
# .ci/widget-floor.sh so that its figure stays comparable). Usage: wasm-small-cargo.sh CARGO-ARGS…
#
# Beyond the profile (opt-level z, fat LTO, one codegen unit, panic = abort), the standard library
# is rebuilt with the bundle (`-Zbuild-std`, rust-src from rustup) with:
#   -Cpanic=immediate-abort  a panic is the wasm trap `unreachable` at once: no formatting of
#                            panic messages, no panic hook (the browser's console shows
#                            "RuntimeError: unreachable" and its wasm stack instead of a message);
#   -Zlocation-detail=none   no file/line/column strings for panics;
#   -Zfmt-debug=none         `{:?}` prints nothing (the panel never shows Debug output: every text
#                            a visitor sees comes from the catalogues, `Display` or the server).
# Measured on the panel (2026-12-04): wasm 191,966 → 171,622 bytes brotli.
# These are unstable flags; RUSTC_BOOTSTRAP=1 lets the pinned stable compiler (1.95) accept them
# for this one build instead of installing a nightly toolchain. They touch only this bundle's
# own target directory: the server and the app's bundle are built without them.
set -euo pipefail
if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
  rustup component add rust-src
fi
export RUSTC_BOOTSTRAP=1
export RUSTFLAGS="${RUSTFLAGS:-} -Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none -Zfmt-debug=none"
exec cargo build -Zbuild-std=std,panic_abort --target wasm32-unknown-unknown "$@"
