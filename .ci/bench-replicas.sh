#!/usr/bin/env bash
# Issue 46, goal 3: many streams at once through nginx to two Parley replicas on PostgreSQL,
# their model calls to a fake upstream over h2c (`parley bench-replicas`; see its --help and
# docs/performance.md). Creates a fresh database on the local PostgreSQL and drops it after;
# raises this run's open-file limit to the hard limit (the processes it starts inherit it), not
# the machine's. Build first (./run.sh or cargo build --release).
#
#   .ci/bench-replicas.sh                       # 10,000 streams, 64 tokens 250 ms apart
#   .ci/bench-replicas.sh --streams 2000 --json /tmp/r.json
#   .ci/bench-replicas.sh --http1-upstream      # the same over HTTP/1.1 to the upstream
set -euo pipefail
cd "$(dirname "$0")/.."
server="${PARLEY_BENCH_POSTGRES:-postgres://postgres@127.0.0.1:5432}"
db="parley_bench_replicas_$$"
ulimit -n "$(ulimit -Hn)"
echo "open-file limit for this run: $(ulimit -n)"
psql "$server/postgres" -qc "CREATE DATABASE $db" >/dev/null
trap 'psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null' EXIT
target/release/parley bench-replicas --database-url "$server/$db" "$@"
