#!/usr/bin/env bash
# The side-by-side benchmark as docs/performance.md describes it: the release server on SQLite
# (a fresh data directory) with an agent on the harness's fake upstream, then
# ../shared/peers/run-side-by-side.sh with the arguments given (default: 5 rounds × 200
# requests, then a burst of 1,000 streams). Build first (./run.sh or cargo build --release).
# PARLEY_BENCH_H2C=1: Parley reaches the fake upstream over HTTP/2 with prior knowledge
# (PARLEY_H2C_ENDPOINTS), its answers multiplexed on a few connections.
set -euo pipefail
cd "$(dirname "$0")/.."
peers="${PARLEY_PEERS:-../shared/peers}"
data="$(mktemp -d)"
export PARLEY_DATA_DIR="$data"
# The fake upstream on loopback is the one private destination (the outbound fence).
export PARLEY_PRIVATE_ENDPOINTS=127.0.0.1:18080
if [ "${PARLEY_BENCH_H2C:-0}" = 1 ]; then
  export PARLEY_H2C_ENDPOINTS=127.0.0.1:18080
fi
target/release/parley create-agent --key bench --name bench --capabilities ticket_escalation \
  --provider openai --base-url http://127.0.0.1:18080/v1 --model fake-model >/dev/null
LEPTOS_ENV=PROD PARLEY_NO_LIMITS=1 PARLEY_AGENT_DAILY_CAP_USD=0 PARLEY_VISITOR_DAILY_CAP_USD=0 PARLEY_ADDRESS_DAILY_CAP_USD=0 \
  target/release/parley serve --addr 127.0.0.1:18190 >"$data/server.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 60); do curl -sf http://127.0.0.1:18190/healthz >/dev/null && break; sleep 0.5; done
token="$(curl -s -X POST http://127.0.0.1:18190/api/v1/visitors -H 'content-type: application/json' \
  -d '{"agent":"bench"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')"
export PRODUCT_URL=http://127.0.0.1:18190/api/v1/chat
export PRODUCT_BODY='{"agent":"bench","message":"Hello, request {{n}}"}'
export PRODUCT_BODY_TOOL='{"agent":"bench","message":"[[tool:escalate_to_human]] request {{n}}"}'
export PRODUCT_HEADERS="Authorization: Bearer $token" PRODUCT_TOOL_REGEX='(?m)^event: ?tool_call' PRODUCT_PID="$pid"
if [ "$#" -gt 0 ]; then
  "$peers/run-side-by-side.sh" "$@"
else
  "$peers/run-side-by-side.sh" --rounds 5 --requests 200
  "$peers/run-side-by-side.sh" --streams 1000
fi
