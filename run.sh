#!/usr/bin/env bash
# Runs Parley on http://127.0.0.1:3000 with SQLite in ./data and the offline demo model, plus a
# demo host page on http://127.0.0.1:3001 that embeds the widget from another origin. The demo
# turns on the sandbox payment provider (its pay page marks orders paid; no money moves).
# Installs the build tools it needs first (once), then builds the release.
set -euo pipefail
cd "$(dirname "$0")"
source .ci/ensure-tools.sh

say "building Parley (release)"
.ci/build-app.sh
say "building the widget's own bundle"
.ci/build-widget.sh

export LEPTOS_ENV=PROD
export PARLEY_SITE_ROOT="${PARLEY_SITE_ROOT:-target/site}"
export PARLEY_DEMO_HOST_ADDR="${PARLEY_DEMO_HOST_ADDR:-127.0.0.1:3001}"
export PARLEY_PAYMENTS_SANDBOX="${PARLEY_PAYMENTS_SANDBOX:-1}"
exec target/release/parley serve "$@"
