#!/usr/bin/env bash
# The MCP server checked with a client that is not ours, as a user would meet it: the release
# server, a token made by the CLI, the URL it prints, the official Python SDK (PyPI `mcp`) as the
# client. test.sh runs it after the Rust tests (which build target/release/parley).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(mktemp -d)"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export PARLEY_DATA_DIR="$dir" PARLEY_ADDR="127.0.0.1:$port"
target/release/parley serve >"$dir/server.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 1 60); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://$PARLEY_ADDR/healthz')" 2>/dev/null && break
  sleep 0.5
done
url="$(target/release/parley mcp-token create --agent demo-immigration --name test.sh | sed -n 's/^URL: //p')"
[ -n "$url" ] || { echo "the CLI printed no MCP URL; server log:" >&2; cat "$dir/server.log" >&2; exit 1; }
python3 server/tests/mcp_client.py "$url" "优才计划" || { echo "the Python MCP client check failed" >&2; exit 1; }
