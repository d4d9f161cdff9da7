#!/usr/bin/env bash
# wasm-opt -Oz with the wasm features Rust's wasm32 target emits: one place for the flags of every
# browser bundle that is measured (.ci/build-widget.sh, .ci/widget-floor.sh). Usage: IN OUT
set -euo pipefail
exec wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-reference-types --enable-multivalue "$1" -o "$2"
