#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A misbehaving exec: adapter never stops a `memfail run` or corrupts its results: after a crash or
# a garbage line mid-checkpoint memfail restores the restarted adapter's memory and goes on (the
# results equal a run without the fault); a failed call is sent once more; an adapter that keeps
# losing its memory has the rest of that scenario recorded as lost, and the next dataset runs
# normally. Every probe is recorded exactly once.
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

# stage counts per dataset: "dataset graded errors lost distinct" lines.
counts() {
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT dataset, count(*), sum(stage = 'error'), sum(error LIKE '%lost its memory%'), "
                      "count(DISTINCT probe_id || ':' || k) FROM probe_results GROUP BY dataset ORDER BY dataset"):
    print(*row)
PY
}
# every probe's stage, to compare a run that recovered with one that never failed.
stages() {
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT dataset, probe_id, k, stage FROM probe_results ORDER BY dataset, probe_id, k"):
    print(*row)
PY
}
run() {  # run NAME ADAPTER_ARGS...: a run over two datasets at k=1 with the fixture adapter
  local name=$1; shift
  # --max-error-rate 1: the rows in error are what this test looks at, not a reason to fail.
  "$memfail" run --system "exec:cmd=python3 $adapter $*,timeout=5s" --max-error-rate 1 \
    --datasets long_hop,conditional_facts_easy --k 1 --out "$work/$name.db" > "$work/$name.out" 2>&1 \
    || { cat "$work/$name.out"; fail "the run stopped on the '$name' adapter"; }
  counts "$work/$name.db" > "$work/$name.txt"
  [ "$(wc -l < "$work/$name.txt")" = 2 ] || fail "$name: both datasets must be recorded"
  while read -r dataset graded errors lost distinct; do
    [ "$graded" = "$distinct" ] || fail "$name/$dataset: $graded rows for $distinct probes"
  done < "$work/$name.txt"
}

run clean
stages "$work/clean.db" > "$work/clean.stages"

# A crash or a garbage line mid-checkpoint: the adapter restarts empty, memfail stores the
# scenario's sessions into it again and goes on from the probe it was on. Nothing is lost: every
# probe ends as it does in a run without the fault.
for fault in crash garbage; do
  run "$fault" --fail-retrieve 5:$fault --fault-once "$work/$fault.once"
  [ -e "$work/$fault.once" ] || fail "$fault: the fault was never committed"
  stages "$work/$fault.db" > "$work/$fault.stages"
  cmp -s "$work/clean.stages" "$work/$fault.stages" || { diff "$work/clean.stages" "$work/$fault.stages" | head; fail "$fault: the recovered run differs from the clean one"; }
  grep -Eq "the adapter restarted and lost its memory; storing its [0-9]+ sessions? again \(restore 1 of 3\)" "$work/$fault.out" \
    || { cat "$work/$fault.out"; fail "$fault: the restore was not announced"; }
done

# One answer with more than k memories: that call is sent again and the probe graded.
run too_many_once --fail-retrieve 5:too_many
stages "$work/too_many_once.db" > "$work/too_many_once.stages"
cmp -s "$work/clean.stages" "$work/too_many_once.stages" || fail "a failed call that succeeded when sent again was not graded"

# Every answer from the fifth on has too many memories: those probes fail twice and are errors,
# nothing is lost (each dataset has its own adapter process).
run too_many --fail-retrieve 5+:too_many
while read -r dataset graded errors lost distinct; do
  [ "$errors" = $(( graded - 4 )) ] && [ "$lost" = 0 ] || fail "too_many/$dataset: expected $(( graded - 4 )) errors and none lost, got $errors, $lost"
done < "$work/too_many.txt"

# An adapter that crashes on every fifth retrieval of each process: restored three times per
# scenario (16 probes graded, four per process), then the rest of the scenario is recorded as lost.
run crash_always --fail-retrieve 5:crash
while read -r dataset graded errors lost distinct; do
  [ "$errors" = $(( graded - 16 )) ] && [ "$lost" = "$errors" ] || fail "crash_always/$dataset: expected $(( graded - 16 )) errors, all lost, got $errors, $lost"
done < "$work/crash_always.txt"
grep -q "warning: long_hop: the adapter lost its memory more than 3 times in this scenario" "$work/crash_always.out" \
  || { cat "$work/crash_always.out"; fail "the loss was not announced"; }

# By default a run with that many rows in error has failed: exit 1, with the causes named.
set +e
"$memfail" run --system "exec:cmd=python3 $adapter --fail-retrieve 5+:too_many,timeout=5s" \
  --datasets conditional_facts_easy --k 1 --out "$work/default.db" > "$work/default.out" 2>&1
code=$?
set -e
[ "$code" = 1 ] || { cat "$work/default.out"; fail "a run with most rows in error exited $code, not 1"; }
grep -q "ended in error, more than --max-error-rate 0.05" "$work/default.out" || { cat "$work/default.out"; fail "no error-rate summary"; }
grep -q "when asked for at most k=1" "$work/default.out" || { cat "$work/default.out"; fail "the causes were not listed"; }
echo "adapter faults run: ok"
