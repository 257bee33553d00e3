#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A run whose model endpoint does not work fails loudly and quickly instead of "finishing" with
# every probe in error: against an unreachable endpoint the preflight stops it in seconds (exit 3,
# naming the model and the endpoint, nothing written); against an endpoint that answers the
# preflight and then fails every call, N failures in a row stop it (exit 3, the endpoint's last
# error), the failed calls are recorded with their attempts, and --resume finishes the run once the
# endpoint works. Usage: llm_fail_fast.sh MEMFAIL FIXTURES_DIR (FAKE_LLM names the server).
set -euo pipefail
memfail=$1
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
common=(--system verbatim --datasets long_hop --limit 20 --k 1 --api-key-env MEMFAIL_FAIL_FAST_NO_KEY
        --answer-model taker -q)

# 1. Nothing listens on the port: the preflight fails within seconds, before any results are written.
port=$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1]); s.close()")
start=$(date +%s.%N)
set +e
"$memfail" run "${common[@]}" --base-url "http://127.0.0.1:$port/v1" --out "$work/dead.db" > /dev/null 2> "$work/dead.txt"
code=$?
set -e
elapsed=$(python3 -c "print($(date +%s.%N) - $start)")
[ "$code" = 3 ] || fail "an unreachable endpoint exited $code: $(cat "$work/dead.txt")"
grep -q "preflight: the answer model 'taker' at http://127.0.0.1:$port/v1 did not answer" "$work/dead.txt" \
  || fail "the preflight message: $(cat "$work/dead.txt")"
python3 -c "import sys; sys.exit(0 if $elapsed < 10 else 1)" || fail "the preflight took $elapsed s"
[ ! -e "$work/dead.db" ] || fail "a run stopped by the preflight left a results file"

# 2. The endpoint answers the preflight, then fails every call with 503.
cat > "$work/failing.json" <<'JSON'
{"rules": [{"name": "preflight", "match": {"contains": "memfail preflight"}, "reply": "ok"}],
 "default": {"fault": "http_503"}}
JSON
"$fake_llm" --script "$work/failing.json" --port-file "$work/port" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
root="http://127.0.0.1:$(cat "$work/port")"
args=("${common[@]}" --base-url "$root/v1" --retries 1 --concurrency 2 --max-consecutive-failures 8 --out "$work/r.db")
set +e
"$memfail" run "${args[@]}" > "$work/out.txt" 2> "$work/err.txt"
code=$?
set -e
[ "$code" = 3 ] || fail "a failing endpoint exited $code: $(cat "$work/err.txt")"
grep -q "calls in a row to $root/v1 (model taker) failed" "$work/err.txt" || fail "the abort message: $(cat "$work/err.txt")"
grep -q "HTTP 503" "$work/err.txt" || fail "the endpoint's last error is not shown: $(cat "$work/err.txt")"
python3 - "$work/r.db" "$root" <<'PY'
import json, sqlite3, sys, urllib.request
db = sqlite3.connect(sys.argv[1])
(status,) = db.execute("select status from runs").fetchone()
assert status != "finished", status
calls, errors, attempts = db.execute(
    "select count(*), sum(error_kind is not null), sum(attempts) from llm_calls").fetchone()
assert errors == calls and calls >= 8, (calls, errors)
# Every request the server saw is accounted (one preflight reply aside), retries included.
seen = json.load(urllib.request.urlopen(sys.argv[2] + "/_fake/stats"))["requests"]
assert attempts == seen - 1, f"{attempts} attempts recorded, the server saw {seen - 1} run requests"
assert calls <= 8 + 2, f"{calls} calls: the run went on after the limit"
PY

# 3. The endpoint works again: --resume finishes the run.
curl -s -X POST -H 'Content-Type: application/json' --data '{"default": {"reply": "B"}}' "$root/_fake/script" > /dev/null \
  || fail "cannot change the fake-llm script"
"$memfail" run "${args[@]}" --resume > "$work/resume.txt" 2> "$work/resume_err.txt" \
  || fail "resume after the endpoint recovered: $(cat "$work/resume_err.txt")"
grep -q "resumed" "$work/resume.txt" || fail "not resumed: $(cat "$work/resume.txt")"
python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute('select count(*) from runs').fetchone()[0] == 1
assert db.execute('select status from runs').fetchone()[0] == 'finished'
" "$work/r.db" || fail "the resumed run did not finish"
echo "ok"
