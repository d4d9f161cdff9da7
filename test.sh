#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests on SQLite and on PostgreSQL, then the
# Playwright end-to-end tests in Debian's Chromium. Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")"
source .ci/ensure-tools.sh

if [ ! -x /usr/bin/chromium ]; then
  say "installing Chromium (Debian)"
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi

# PostgreSQL on 127.0.0.1:5432 (trust auth, database `test`): start it if it is installed but down.
pg_url="${PARLEY_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test}"
if command -v pg_isready >/dev/null && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  say "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
fi

say "building (release: server + browser bundle)"
cargo leptos build --release

say "Rust tests (SQLite)"
cargo test --release --workspace

if command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; then
  say "Rust integration tests (PostgreSQL)"
  PARLEY_TEST_POSTGRES="$pg_url" cargo test --release -p parley-server --tests
  # Each test made its own database; drop them.
  psql "$pg_url" -Atc "SELECT datname FROM pg_database WHERE datname LIKE 'parley_t_%'" \
    | while read -r db; do psql "$pg_url" -qc "DROP DATABASE IF EXISTS $db" >/dev/null || true; done
else
  say "PostgreSQL is not available on 127.0.0.1:5432: the PostgreSQL run is SKIPPED"
fi

say "end-to-end tests (Playwright, Chromium)"
(
  cd end2end
  if [ ! -d node_modules/@playwright/test ]; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
  fi
  npx playwright test
)
