#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The adapter transports lose nothing: `verbatim` run directly, through exec: (memfail serve --stdio)
# and through http: (memfail serve) gives the same stage and the same retrieved memories for every
# probe of the five datasets. memfail serve passes conformance over http:, and so does the Mem0
# example (npm mem0ai, infer=false) over exec: with memfail serve --embeddings as its offline
# embeddings endpoint; then the Mem0 example is diagnosed on the five datasets end to end.
# Usage: adapters_end_to_end.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$1
fixtures=$2
root=$(cd "$fixtures/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Starts `memfail serve ARGS...` on a free port; sets $port.
start_server() {
  local port_file="$work/port.$RANDOM"
  "$memfail" serve --port 0 --port-file "$port_file" "$@" > "$work/serve.$RANDOM.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$port_file" ] && break; sleep 0.1; done
  [ -s "$port_file" ] || fail "memfail serve $* did not start"
  port=$(cat "$port_file")
}

# dataset, probe, k, stage, retrieved memory ids: one line per probe, sorted.
probe_table() {
  python3 - "$1" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for dataset, probe, k, stage, retrieved in db.execute(
        "SELECT dataset, probe_id, k, stage, retrieved_json FROM probe_results ORDER BY dataset, probe_id, k"):
    print(dataset, probe, k, stage, ",".join(m["id"] for m in json.loads(retrieved)))
PY
}

# 1. The same system three ways.
"$memfail" run --system verbatim --datasets all --k 1,5 --out "$work/direct.db" > /dev/null 2>&1 \
  || fail "direct verbatim run"
"$memfail" run --system "exec:cmd=$memfail serve --stdio --system verbatim" --datasets all --k 1,5 \
  --out "$work/exec.db" > "$work/exec.out" 2>&1 || { cat "$work/exec.out"; fail "verbatim through exec:"; }
start_server --system verbatim
http_url="http://127.0.0.1:$port"
"$memfail" run --system "http:url=$http_url" --datasets all --k 1,5 --out "$work/http.db" > "$work/http.out" 2>&1 \
  || { cat "$work/http.out"; fail "verbatim through http:"; }
probe_table "$work/direct.db" > "$work/direct.txt"
probe_table "$work/exec.db" > "$work/exec.txt"
probe_table "$work/http.db" > "$work/http.txt"
[ "$(wc -l < "$work/direct.txt")" -gt 500 ] || fail "too few probes recorded"
diff -q "$work/direct.txt" "$work/exec.txt" > /dev/null || { diff "$work/direct.txt" "$work/exec.txt" | head; fail "exec: differs from direct"; }
diff -q "$work/direct.txt" "$work/http.txt" > /dev/null || { diff "$work/direct.txt" "$work/http.txt" | head; fail "http: differs from direct"; }

# 2. memfail serve conforms over http:.
"$memfail" conformance --system "http:url=$http_url" > "$work/serve-conformance.txt" 2>&1 \
  || { cat "$work/serve-conformance.txt"; fail "memfail serve does not conform"; }
grep -q "^PASSED: 19 passed, 0 failed" "$work/serve-conformance.txt" || { cat "$work/serve-conformance.txt"; fail "serve summary"; }

# 3. The Mem0 example (a peer nobody here wrote), when its npm packages are installed.
adapter_dir="$root/examples/adapters/mem0-node"
if ! command -v node > /dev/null || [ ! -d "$adapter_dir/node_modules/mem0ai" ]; then
  if [ "${MEMFAIL_REQUIRE_PEERS:-0}" = 1 ]; then fail "node or $adapter_dir/node_modules is missing (MEMFAIL_REQUIRE_PEERS=1)"; fi
  echo "SKIP: the Mem0 part needs node and $adapter_dir/install.sh (the transport checks above passed)" >&2
  exit 77
fi
start_server --system none --embeddings
mem0="exec:cmd=node $adapter_dir/adapter.mjs --embed-url http://127.0.0.1:$port/v1 --threshold 0,timeout=60s"
"$memfail" conformance --system "$mem0" > "$work/mem0-conformance.txt" 2>&1 \
  || { cat "$work/mem0-conformance.txt"; fail "the Mem0 example does not conform"; }
grep -q "^PASSED: 1[89] passed, 0 failed" "$work/mem0-conformance.txt" || { cat "$work/mem0-conformance.txt"; fail "mem0 summary"; }
"$memfail" run --system "$mem0" --datasets all --k 5 --out "$work/mem0.db" > "$work/mem0.out" 2>&1 \
  || { cat "$work/mem0.out"; fail "the Mem0 run"; }
python3 - "$work/mem0.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT dataset, count(*), sum(stage = 'error'), sum(stage = 'not_stored') FROM probe_results GROUP BY dataset").fetchall()
assert len(rows) == 5, rows
for dataset, graded, errors, not_stored in rows:
    # infer=false keeps every message with its id: nothing may be lost or fail.
    assert errors == 0 and not_stored == 0, (dataset, graded, errors, not_stored)
PY
echo "adapters end to end: ok"
