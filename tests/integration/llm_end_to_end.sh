#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The LLM stages through the real binaries: memfail run against tools/fake-llm over HTTP gives the
# full taxonomy; the identical command again makes no request and reproduces every row; a TOML
# config works and a bad one is refused with file:line; the API key is in no file memfail wrote.
# Usage: llm_end_to_end.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
script="$(cd "$(dirname "$0")/../.." && pwd)/examples/fake-llm/judge-passes.json"
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

export MEMFAIL_E2E_KEY="sk-e2e-9d1c0b7a6e5f4d3c2b1a"
"$fake_llm" --script "$script" --port-file "$work/port" --api-key-env MEMFAIL_E2E_KEY > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
base="http://127.0.0.1:$(cat "$work/port")/v1"
requests() { python3 -c "import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + '/_fake/stats'))['requests'])" "${base%/v1}"; }

cat > "$work/llm.toml" <<TOML
base_url = "$base"
api_key_env = "MEMFAIL_E2E_KEY"
concurrency = 8
[models]
answer = "scripted-taker"
judge = "scripted-judge"
TOML
args=(--system verbatim --datasets conditional_facts_easy,long_hop --k 5 --config "$work/llm.toml" --out "$work/r.db" -q)

"$memfail" run "${args[@]}" > "$work/first.txt"
first_requests=$(requests)
[ "$first_requests" -gt 100 ] || fail "expected LLM requests, the server saw $first_requests"
grep -q "llm judge" "$work/first.txt" || fail "no LLM accounting printed: $(cat "$work/first.txt")"

"$memfail" run "${args[@]}" > "$work/second.txt"
[ "$(requests)" = "$first_requests" ] || fail "the repeated run made $(( $(requests) - first_requests )) requests"

python3 - "$work/r.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def rows(run):
    return db.execute("select scenario_id, probe_id, k, stage, answer from probe_results where run_id = ? order by 1, 2, 3", (run,)).fetchall()
one, two = rows(1), rows(2)
assert one and one == two, "the cached run differs from the first"
stages = {s for (_, _, _, s, _) in one}
# Conditional facts: pets' answers are judged wrong (reasoning_error), others right; Long-Hop: B.
assert {"correct", "reasoning_error"} <= stages, stages
hits = db.execute("select sum(cache_hit), count(*) from llm_calls where run_id = 2").fetchone()
assert hits[0] == hits[1] and hits[1] > 0, hits
PY

"$memfail" report "$work/r.db" > "$work/report.txt"
grep -q "End-to-end success" "$work/report.txt" || fail "report lacks the end-to-end table"
grep -q "LLM calls" "$work/report.txt" || fail "report lacks LLM accounting"

# The key is in no file memfail wrote (results, cache, memory stores) nor in its output.
if grep -r -l -a "$MEMFAIL_E2E_KEY" "$work"/r.db* "$work"/*.txt 2>/dev/null | grep -v server.txt; then
  fail "the API key leaked into the files above"
fi

# A bad config file is refused with file:line and exit code 2, before anything is written.
printf 'concurency = 4\n' > "$work/bad.toml"
set +e
"$memfail" run --system verbatim --datasets long_hop --config "$work/bad.toml" --out "$work/bad.db" -q 2> "$work/bad.txt"
code=$?
set -e
[ "$code" = 2 ] || fail "bad config exited $code"
grep -q "bad.toml:1: concurency" "$work/bad.txt" || fail "bad config message: $(cat "$work/bad.txt")"
[ ! -e "$work/bad.db" ] || fail "a refused run left a results file"
echo "ok"
