#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests on SQLite and on PostgreSQL, then the
# Playwright end-to-end tests in Debian's Chromium. Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")"
source .ci/ensure-tools.sh

apt_updated=""
apt_install() {
  [ -n "$apt_updated" ] || { apt-get update -qq; apt_updated=1; }
  # RUNLEVEL=1: the package's service is not started (the tests start their own, on 127.0.0.1).
  RUNLEVEL=1 apt-get install -y -qq "$@" >/dev/null
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
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
fi

# The server binary (target/release/parley, which the MCP check and Playwright run) is built by
# the first `cargo test` below, with the features its dev-dependencies add; building it here too
# would compile the app crate twice.
say "building the app's browser bundle (release)"
.ci/build-app.sh --browser-only
say "building the widget's own bundle (the embed page's panel, without the console)"
.ci/build-widget.sh

# The MCP server is also checked with a client that is not ours: the official Python SDK from
# PyPI. With it installed, the Rust MCP tests run it (and fail rather than skip if it breaks).
say "installing the Python MCP SDK (pip install mcp) for the MCP client check"
if python3 -m pip install --quiet --disable-pip-version-check mcp >/dev/null 2>&1 && python3 -c "import mcp" 2>/dev/null; then
  export PARLEY_PYTHON_MCP=required
else
  say "could not install the Python MCP SDK: the Python MCP client check is SKIPPED"
fi

# Mail is checked against a real SMTP server, Python's aiosmtpd from PyPI.
say "installing aiosmtpd (pip install aiosmtpd) for the mail checks"
if python3 -m pip install --quiet --disable-pip-version-check aiosmtpd >/dev/null 2>&1 && python3 -c "import aiosmtpd" 2>/dev/null; then
  export PARLEY_AIOSMTPD=required
else
  say "could not install aiosmtpd: the mail checks are SKIPPED"
fi

timeout 60 python3 .ci/check-docs.py  # the docs' paths, table map and layering rule (issue 40)
say "Rust tests (SQLite)"
cargo test --release --workspace

if [ "${PARLEY_PYTHON_MCP:-}" = required ]; then
  # As a user would: the release server, a token from the CLI, the URL it prints, a Python client.
  say "MCP: the Python SDK client against the release server, with a token made by the CLI"
  mcp_dir="$(mktemp -d)"
  mcp_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  export PARLEY_DATA_DIR="$mcp_dir" PARLEY_ADDR="127.0.0.1:$mcp_port"
  target/release/parley serve >"$mcp_dir/server.log" 2>&1 &
  mcp_pid=$!
  for _ in $(seq 1 60); do
    python3 -c "import urllib.request; urllib.request.urlopen('http://$PARLEY_ADDR/healthz')" 2>/dev/null && break
    sleep 0.5
  done
  mcp_url="$(target/release/parley mcp-token create --agent demo-immigration --name test.sh | sed -n 's/^URL: //p')"
  mcp_ok=0
  python3 server/tests/mcp_client.py "$mcp_url" "优才计划" || mcp_ok=$?
  kill "$mcp_pid" 2>/dev/null || true
  wait "$mcp_pid" 2>/dev/null || true
  unset PARLEY_DATA_DIR PARLEY_ADDR
  rm -rf "$mcp_dir"
  [ "$mcp_ok" -eq 0 ] || { echo "the Python MCP client check failed" >&2; exit 1; }
fi

if command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; then
  say "Rust integration tests (PostgreSQL)"
  # The same selection as above, so nothing is compiled again.
  PARLEY_TEST_POSTGRES="$pg_url" cargo test --release --workspace
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
  # The replicas spec (two servers on PostgreSQL behind nginx) runs when PostgreSQL is here.
  if command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; then
    export PARLEY_E2E_POSTGRES="$pg_url"
  fi
  npx playwright test
)
