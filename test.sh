#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests on SQLite and on PostgreSQL, the MCP server
# against the official Python SDK, then the Playwright end-to-end tests in Debian's Chromium.
# Installs what is missing first. Every phase has a time limit (`timeout`), and every Rust test
# one of its own (cargo-nextest, .config/nextest.toml), so a hang fails with its name.
set -euo pipefail
cd "$(dirname "$0")"
source .ci/ensure-tools.sh

# phase MINUTES NAME COMMAND...: runs COMMAND, failing the run if it fails or outlives MINUTES.
phase() {
  local minutes=$1 name=$2
  shift 2
  say "$name"
  local rc=0
  timeout --kill-after=20s "${minutes}m" "$@" || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "test.sh: \"$name\" did not finish within $minutes minutes" >&2
    exit 1
  elif [ "$rc" -ne 0 ]; then
    echo "test.sh: \"$name\" failed (exit $rc)" >&2
    exit "$rc"
  fi
}

apt_updated=""
apt_install() {
  [ -n "$apt_updated" ] || { timeout 5m apt-get update -qq; apt_updated=1; }
  # RUNLEVEL=1: the package's service is not started (the tests start their own, on 127.0.0.1).
  RUNLEVEL=1 timeout 10m apt-get install -y -qq "$@" >/dev/null
}
if [ ! -x /usr/bin/chromium ]; then
  say "installing Chromium (Debian)"
  apt_install chromium
fi
# The replicas test puts a real nginx in front of two servers (PostgreSQL pass).
if [ ! -x /usr/sbin/nginx ]; then
  say "installing nginx (Debian)"
  apt_install nginx
fi

# PostgreSQL on 127.0.0.1:5432 (trust auth, database `test`): start it if it is installed but down.
pg_url="${PARLEY_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test}"
if command -v pg_isready >/dev/null && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  say "starting PostgreSQL"
  timeout 60 pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
fi

# The browser bundles are only needed by Playwright: they build in the background, at a lower
# priority, while cargo compiles the tests (both wasm builds use their own target directories).
mkdir -p target/logs
say "building the browser bundles in the background (log: target/logs/bundles.log)"
(
  nice -n 10 timeout 40m .ci/build-app.sh --browser-only \
    && nice -n 10 timeout 15m .ci/build-widget.sh
) >target/logs/bundles.log 2>&1 &
bundles=$!
trap 'kill "$bundles" 2>/dev/null || true' EXIT

# Checked with clients that are not ours: the official Python MCP SDK and a real SMTP server
# (aiosmtpd). With them installed the tests that use them fail rather than skip if they break.
pip_install() {
  timeout 5m python3 -m pip install --quiet --disable-pip-version-check "$1" >/dev/null 2>&1 \
    && python3 -c "import $1" 2>/dev/null
}
say "installing the Python MCP SDK and aiosmtpd (pip)"
if pip_install mcp; then
  export PARLEY_PYTHON_MCP=required
else
  say "could not install the Python MCP SDK: the Python MCP client check is SKIPPED"
fi
if pip_install aiosmtpd; then
  export PARLEY_AIOSMTPD=required
else
  say "could not install aiosmtpd: the mail checks are SKIPPED"
fi
# Web Push is checked by a push service the tests start, on PyPI's http_ece (RFC 8291) and
# cryptography (the VAPID JWT).
if pip_install http_ece; then
  export PARLEY_HTTP_ECE=required
else
  say "could not install http_ece: the Web Push checks are SKIPPED"
fi
# The crawler's test site has a PDF made with fpdf2 (server/tests/site/make_site.py), as has the
# console's upload spec: a real PDF writer, not bytes we wrote by hand.
say "installing fpdf2 (pip)"
timeout 5m python3 -m pip install --quiet --disable-pip-version-check fpdf2 >/dev/null 2>&1 || true
python3 -c "import fpdf" || { echo "test.sh: fpdf2 could not be installed (pip install fpdf2)" >&2; exit 1; }

phase 1 "checking the docs: the paths they name, the table map, the layering rule" python3 .ci/check-docs.py

# The tests, compiled once (release: the same build as run.sh's server, so `./run.sh` after
# this rebuilds nothing), then run on each database. cargo-nextest gives every test its own time
# limit; without it, plain `cargo test` runs them under the phase limits only.
if cargo nextest --version >/dev/null 2>&1; then
  phase 45 "compiling the Rust tests (release)" cargo nextest run --release --workspace --no-run
  phase 10 "compiling the panel's unit tests" cargo nextest run --release -p parley-widget --features panel --no-run
  rust_tests() { cargo nextest run --release --workspace --no-fail-fast; }
  # The panel's own unit tests (its state, off the browser) build only with its feature.
  panel_tests() { cargo nextest run --release -p parley-widget --features panel --no-fail-fast; }
else
  say "cargo-nextest is not installed: running cargo test (no per-test time limit)"
  phase 45 "compiling the Rust tests (release)" cargo test --release --workspace --no-run
  rust_tests() { cargo test --release --workspace --no-fail-fast; }
  panel_tests() { cargo test --release -p parley-widget --features panel --no-fail-fast; }
fi
export -f rust_tests panel_tests
phase 20 "Rust tests (SQLite)" bash -c rust_tests
phase 10 "the panel's unit tests (its state, natively)" bash -c panel_tests

if [ "${PARLEY_PYTHON_MCP:-}" = required ]; then
  phase 3 "MCP: the Python SDK client against the release server, with a token made by the CLI" \
    .ci/mcp-python-check.sh
fi

if command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; then
  export PARLEY_TEST_POSTGRES="$pg_url"
  phase 20 "Rust tests (PostgreSQL)" bash -c rust_tests
  unset PARLEY_TEST_POSTGRES
  # Each test made its own database; drop them.
  psql "$pg_url" -Atc "SELECT datname FROM pg_database WHERE datname LIKE 'parley_t_%'" \
    | while read -r db; do psql "$pg_url" -qc "DROP DATABASE IF EXISTS $db" >/dev/null || true; done
else
  say "PostgreSQL is not available on 127.0.0.1:5432: the PostgreSQL run is SKIPPED"
fi

say "waiting for the browser bundles"
if ! wait "$bundles"; then
  cat target/logs/bundles.log >&2
  echo "test.sh: building the browser bundles failed" >&2
  exit 1
fi
trap - EXIT

e2e() {
  cd end2end
  if [ ! -d node_modules/@playwright/test ]; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
  fi
  # The replicas spec (two servers on PostgreSQL behind nginx) runs when PostgreSQL is here.
  if command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; then
    export PARLEY_E2E_POSTGRES="$pg_url"
  fi
  npx playwright test
}
export -f e2e
export pg_url
phase 30 "end-to-end tests (Playwright, Chromium)" bash -c e2e
say "all tests passed"
