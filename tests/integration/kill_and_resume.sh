#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A run killed with SIGKILL mid-way continues with --resume and ends with exactly the results of an
# uninterrupted run: no probe lost, none doubled. Usage: kill_and_resume.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
args=(--system verbatim:chunk=sentence --datasets persona_retrieval,long_hop --k 1,2,3,4,5,6,7,8,9,10)

"$memfail" run "${args[@]}" --out "$work/killed.db" 2> "$work/progress.txt" > /dev/null &
pid=$!
# Kill it once grading has started (progress lines say "graded").
for _ in $(seq 1 600); do
  grep -q "graded" "$work/progress.txt" 2>/dev/null && break
  sleep 0.05
done
kill -9 "$pid" 2>/dev/null && killed=1 || killed=0
wait "$pid" 2>/dev/null || true

if [ "$killed" = 1 ]; then
  status=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select status from runs').fetchone()[0])" "$work/killed.db")
  [ "$status" = "running" ] || fail "a killed run should be left 'running', found '$status'"
  "$memfail" run "${args[@]}" --out "$work/killed.db" --resume -q > "$work/resume.txt"
  grep -q "resumed" "$work/resume.txt" || fail "resume did not continue the run: $(cat "$work/resume.txt")"
else
  echo "note: the run finished before it could be killed; checking results only"
fi
"$memfail" run "${args[@]}" --out "$work/clean.db" -q > /dev/null

python3 - "$work/killed.db" "$work/clean.db" <<'PY'
import sqlite3, sys
def rows(path):
    db = sqlite3.connect(path)
    (runs,) = db.execute("select count(*) from runs").fetchone()
    assert runs == 1, f"{path}: {runs} runs, expected the one resumed run"
    total, distinct = db.execute(
        "select count(*), count(distinct scenario_id||'/'||probe_id||'/'||k) from probe_results").fetchone()
    assert total == distinct, f"{path}: {total - distinct} probe results doubled"
    return sorted(db.execute("select scenario_id, probe_id, k, stage from probe_results"))
killed, clean = rows(sys.argv[1]), rows(sys.argv[2])
assert len(killed) == len(clean), f"{len(killed)} results after resume, {len(clean)} in a clean run"
assert killed == clean, "resumed results differ from an uninterrupted run"
print(f"kill and resume: {len(clean)} probe x k results identical to an uninterrupted run")
PY
