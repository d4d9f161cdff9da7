#!/usr/bin/env bash
# Minifies a browser bundle's JavaScript (esbuild, an ES module) or stylesheet (lightningcss,
# for Cargo.toml's `browserquery`, `defaults`): one place for the flags of both bundles
# (.ci/build-app.sh, .ci/build-widget.sh). Usage: minify.sh js|css IN OUT
set -euo pipefail
case "$1" in
  js) exec esbuild --minify --format=esm --log-level=warning "$2" --outfile="$3" ;;
  css) exec lightningcss --minify --targets defaults "$2" -o "$3" ;;
  *) echo "usage: minify.sh js|css IN OUT" >&2; exit 2 ;;
esac
