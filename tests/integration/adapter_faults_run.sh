#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A misbehaving exec: adapter never stops a `memfail run` or corrupts its results: a crash or a
# garbage line mid-checkpoint restarts the adapter and records the probes graded against the lost
# memory as errors, an answer with more than k memories fails that one probe only, and the next
# dataset runs normally. Every probe is recorded exactly once.
# Usage: adapter_faults_run.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$1
fixtures=$2
adapter="$fixtures/adapters/adapter.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v python3 > /dev/null; then
  if [ "${MEMFAIL_REQUIRE_PEERS:-0}" = 1 ]; then fail "python3 is not installed (MEMFAIL_REQUIRE_PEERS=1)"; fi
  echo "SKIP: python3 is not installed" >&2
  exit 77
fi

# stage counts per dataset: "dataset graded errors lost" lines.
counts() {
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT dataset, count(*), sum(stage = 'error'), sum(error LIKE '%restarted%'), "
                      "count(DISTINCT probe_id || ':' || k) FROM probe_results GROUP BY dataset ORDER BY dataset"):
    print(*row)
PY
}

for fault in crash garbage too_many; do
  # --max-error-rate 1: the rows in error are what this test looks at, not a reason to fail.
  "$memfail" run --system "exec:cmd=python3 $adapter --fail-retrieve 5:$fault,timeout=5s" --max-error-rate 1 \
    --datasets long_hop,conditional_facts_easy --k 1 --out "$work/$fault.db" > "$work/$fault.out" 2>&1 \
    || { cat "$work/$fault.out"; fail "the run stopped on a '$fault' adapter"; }
  counts "$work/$fault.db" > "$work/$fault.txt"
  while read -r dataset graded errors lost distinct; do
    [ "$graded" = "$distinct" ] || fail "$fault/$dataset: $graded rows for $distinct probes"
    case "$fault" in
      # Not a restart: only the fifth probe fails (each dataset has its own adapter process).
      too_many) [ "$errors" = 1 ] && [ "$lost" = 0 ] || fail "$fault/$dataset: expected 1 error and none lost, got $errors, $lost";;
      *) [ "$errors" = $(( graded - 4 )) ] || fail "$fault/$dataset: expected all but the first 4 probes to be errors, got $errors of $graded"
         [ "$lost" = $(( graded - 5 )) ] || fail "$fault/$dataset: expected $(( graded - 5 )) probes marked lost, got $lost";;
    esac
  done < "$work/$fault.txt"
  [ "$(wc -l < "$work/$fault.txt")" = 2 ] || fail "$fault: both datasets must be recorded"
done
grep -q "warning: long_hop: the adapter failed and lost its memory" "$work/crash.out" || fail "the loss was not announced"

# By default a run with that many rows in error has failed: exit 1, with the causes named.
set +e
"$memfail" run --system "exec:cmd=python3 $adapter --fail-retrieve 5:crash,timeout=5s" \
  --datasets conditional_facts_easy --k 1 --out "$work/default.db" > "$work/default.out" 2>&1
code=$?
set -e
[ "$code" = 1 ] || { cat "$work/default.out"; fail "a run with most rows in error exited $code, not 1"; }
grep -q "ended in error, more than --max-error-rate 0.05" "$work/default.out" || { cat "$work/default.out"; fail "no error-rate summary"; }
grep -q "restarted" "$work/default.out" || { cat "$work/default.out"; fail "the causes were not listed"; }
echo "adapter faults run: ok"
