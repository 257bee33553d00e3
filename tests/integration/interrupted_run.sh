#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A run stopped by SIGTERM (or Ctrl-C) stops between sessions or probes, keeps what it recorded, is marked interrupted, exits 128+signal,
# leaves no writer claim behind, and the same command with --resume finishes it with every probe
# recorded once.
# Usage: interrupted_run.sh MEMFAIL_BINARY FIXTURES_DIR
set -euo pipefail
memfail=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 > /dev/null || { echo "SKIP: needs python3" >&2; exit 77; }

system="exec:cmd=python3 $fixtures/adapters/adapter.py --slow 40,timeout=10s"
args=(--system "$system" --datasets conditional_facts_easy --k 1 --out "$work/r.db")

"$memfail" run "${args[@]}" > "$work/first.out" 2>&1 &
pid=$!
# Stop it while it works: the 100 probes (asked after the last session) are retrieved at 40 ms
# each, so about 1.5 s after the start it is storing or retrieving.
sleep 1.5
kill -TERM "$pid"
set +e
wait "$pid"
code=$?
set -e
[ "$code" = 143 ] || { cat "$work/first.out"; fail "a SIGTERM'd run exited $code, not 143"; }
grep -q "interrupted after" "$work/first.out" || { cat "$work/first.out"; fail "the interruption was not announced"; }
"$memfail" ls runs "$work/r.db" > "$work/ls.out"
grep -q "interrupted" "$work/ls.out" || { cat "$work/ls.out"; fail "the run is not marked interrupted"; }
grep -q "written by" "$work/ls.out" && { cat "$work/ls.out"; fail "the stopped run left its writer claim"; }

"$memfail" run "${args[@]}" --resume > "$work/second.out" 2>&1 || { cat "$work/second.out"; fail "resume failed"; }
grep -q "resumed" "$work/second.out" || { cat "$work/second.out"; fail "the run was not resumed"; }
python3 - "$work/r.db" <<'PY' || fail "the resumed run is not whole"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
runs = db.execute("SELECT COUNT(*), MIN(status) FROM runs").fetchone()
assert runs == (1, "finished"), runs
rows, distinct = db.execute("SELECT COUNT(*), COUNT(DISTINCT probe_id) FROM probe_results").fetchone()
assert rows == distinct == 100, (rows, distinct)
PY
echo "interrupted run: ok"
