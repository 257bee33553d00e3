#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The write-integrity suite through the real binary: `datasets generate writ` and `datasets import
# --from writ` write files that validate; every built-in system runs the suite in the three modes
# against tools/fake-llm's extractive stand-in (the model-backed systems' own model and the
# test-taker); the report carries every memory-side check and every answer-side metric; the ledger
# with gold extraction keeps history, as-of, provenance and forgetting perfectly while its naive
# floor (history=off) visibly fails history and as-of.
# Usage: writ_suite.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fixtures=$2
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
work=$(mktemp -d)
server_pid=
judge_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    [ -n "$judge_pid" ] && kill "$judge_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Data: generated and imported, both valid.
"$memfail" datasets generate writ --scenarios 2 -o "$work/gen" > "$work/gen.txt" 2>&1 ||
    fail "generate: $(tail -3 "$work/gen.txt")"
[ "$(ls "$work/gen"/writ_*.jsonl | wc -l)" -eq 16 ] || fail "generate wrote $(ls "$work/gen" | wc -l) files"
"$memfail" datasets validate "$work/gen"/*.jsonl > "$work/validate.txt" 2>&1 || fail "generated files: $(head -5 "$work/validate.txt")"
"$memfail" datasets import --from writ "$fixtures/writ/release" -o "$work/imp" > "$work/imp.txt" 2>&1 ||
    fail "import: $(tail -3 "$work/imp.txt")"
"$memfail" datasets validate "$work/imp"/*.jsonl > "$work/validate-imp.txt" 2>&1 ||
    fail "imported files: $(head -5 "$work/validate-imp.txt")"
grep -q '"source": "writ"' "$work/imp/manifest.json" || fail "the import manifest does not name its source"
# A folder with broken files imports the good one and says what it refused.
# It exits 2: an import that left something out is not a whole one.
rc=0
"$memfail" datasets import --from writ "$fixtures/writ/broken" -o "$work/broken" > "$work/broken.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "import of a folder with broken files exited $rc, not 2: $(tail -3 "$work/broken.txt")"
grep -q "refused" "$work/broken.txt" || fail "refused files are not reported: $(cat "$work/broken.txt")"
grep -q "import is incomplete" "$work/broken.txt" || fail "the incomplete import is not said: $(tail -3 "$work/broken.txt")"
ls "$work/broken"/*.jsonl > /dev/null 2>&1 || fail "the files that could be imported were not written"
# A bad mode is refused before anything is written.
if "$memfail" run --system verbatim --datasets writ_drift --modes native,orcale --out "$work/bad.db" -q > "$work/bad.txt" 2>&1; then
    fail "an unknown mode was accepted"
fi
grep -q "did you mean 'oracle'" "$work/bad.txt" || fail "unknown mode message: $(cat "$work/bad.txt")"

"$fake_llm" --extractive --port-file "$work/port" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
base="http://127.0.0.1:$(cat "$work/port")/v1"

systems=(verbatim facts notes graph mixture ledger "ledger:extract=oracle" "ledger:extract=oracle,history=off" none oracle)
for system in "${systems[@]}"; do
    start=$(date +%s)
    "$memfail" run --system "$system" --datasets writ --data-dir "$work/gen" --k 1,5 --modes native,no_memory,oracle \
        --base-url "$base" --system-model stand-in --answer-model stand-in --out "$work/writ.db" -q \
        > "$work/run.txt" 2>&1 || fail "$system: memfail run failed: $(tail -5 "$work/run.txt")"
    echo "$system: writ in three modes in $(( $(date +%s) - start )) s"
done
# An adapter that answers for itself: its answers are graded, the test-taker is never asked.
"$memfail" run --system "exec:cmd=python3 $fixtures/adapters/adapter.py --answers" --datasets writ_drift,writ_update \
    --data-dir "$work/gen" --k 3 --base-url "$base" --answer-model stand-in --out "$work/agent.db" -q \
    > "$work/run-agent.txt" 2>&1 || fail "adapter with answers: $(tail -5 "$work/run-agent.txt")"
python3 - "$work/agent.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT COUNT(*) FROM probe_results WHERE answer IS NOT NULL").fetchone()[0]
own = db.execute("SELECT COUNT(*) FROM stage_checks WHERE stage = 'answer_source' AND grader = 'system'").fetchone()[0]
taker = db.execute("SELECT COUNT(*) FROM llm_calls WHERE role = 'answer'").fetchone()[0]
errors = db.execute("SELECT COUNT(*) FROM probe_results WHERE stage = 'error'").fetchone()[0]
assert rows > 0 and own == rows, f"{rows} answers, {own} from the system"
assert taker == 0, f"the test-taker was asked {taker} times"
assert errors == 0, f"{errors} rows in error"
PY
# The imported release runs too, answered and judged: every rubric kind is graded, the semantic ones
# by the judge (the stand-in's reply to the judge's schema), the others by their rules.
"$fake_llm" --script "$fixtures/fake-llm/writ-judge.json" --port-file "$work/judge-port" > "$work/judge.txt" 2>&1 &
judge_pid=$!
for _ in $(seq 1 100); do [ -s "$work/judge-port" ] && break; sleep 0.05; done
[ -s "$work/judge-port" ] || fail "the judging fake-llm did not start: $(cat "$work/judge.txt")"
"$memfail" run --system "ledger:extract=oracle" --datasets "$work/imp"/*.jsonl --k 5 --out "$work/imp.db" -q \
    --base-url "http://127.0.0.1:$(cat "$work/judge-port")/v1" --answer-model stand-in --judge-model stand-in \
    > "$work/run-imp.txt" 2>&1 || fail "imported data: $(tail -5 "$work/run-imp.txt")"
python3 - "$work/imp.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
kinds = {}
for (pj,) in db.execute("SELECT probe_json FROM probe_texts"):
    rubric = json.loads(pj).get("rubric")
    if rubric:
        kinds[rubric["kind"]] = kinds.get(rubric["kind"], 0) + 1
wanted = {"exact", "structured", "contains", "numeric", "address", "multi_field", "entity_count", "constraint",
          "abstention", "semantic"}
assert wanted <= set(kinds), f"rubric kinds graded: {sorted(kinds)}"
graders = {}
for kind, grader, decisive in db.execute(
        "SELECT json_extract(t.probe_json, '$.rubric.kind'), c.grader, c.decisive FROM stage_checks c "
        "JOIN probe_texts t USING (run_id, scenario_id, probe_id) WHERE c.stage IN ('answer', 'abstention')"):
    if decisive:
        graders.setdefault(kind, set()).add(grader)
assert graders.get("semantic") == {"llm"}, f"semantic decided by {graders.get('semantic')}"
for kind in wanted - {"semantic"}:
    assert "rules" in graders.get(kind, set()) or "llm" in graders.get(kind, set()), f"{kind}: {graders.get(kind)}"
errors = db.execute("SELECT COUNT(*) FROM probe_results WHERE stage = 'error'").fetchone()[0]
assert errors == 0, f"{errors} rows in error"
PY

"$memfail" report "$work/writ.db" > "$work/report.txt" || fail "report failed"
grep -q "Write integrity, memory side" "$work/report.txt" || fail "no memory-side scorecard in the report"
grep -q "Write integrity, answer side" "$work/report.txt" || fail "no answer-side scorecard in the report"
grep -q "Mode gaps" "$work/report.txt" || fail "no mode gaps in the report"
grep -q "Where wrong answers fail" "$work/report.txt" || fail "no layer attribution in the report"
"$memfail" report "$work/writ.db" --format csv --table integrity -o "$work/integrity.csv"
"$memfail" report "$work/writ.db" --format csv --table integrity-answers -o "$work/answers.csv"
python3 - "$work/integrity.csv" "$work/answers.csv" "${systems[@]}" <<'PY'
import csv, sys

checks = list(csv.DictReader(open(sys.argv[1])))
answers = list(csv.DictReader(open(sys.argv[2])))
systems = sys.argv[3:]
problems = []
by = {}
for row in checks:
    by[(row["run"], row["mode"], row["check"], row["k"])] = row
names = ["current_held", "current_retrieved", "stale_exposure", "retraction", "over_retention", "authority",
         "history_complete", "as_of", "provenance"]
for name in names:
    if not any(r["check"] == name for r in checks):
        problems.append(f"check {name} never reported")
runs = sorted({r["run"] for r in checks})
if len(runs) != len(systems):
    problems.append(f"{len(runs)} runs with checks for {len(systems)} systems: {runs}")

def rate(run, check, mode="native", k="5"):
    row = by.get((run, mode, check, k))
    return None if row is None or row["rate"] == "" else float(row["rate"])

oracle = "ledger:extract=oracle"
floor = "ledger:extract=oracle,history=off"
for check in ["history_complete", "as_of", "provenance", "over_retention", "retraction"]:
    r = rate(oracle, check)
    if r is None or r < 0.99:
        problems.append(f"{oracle}: {check} = {r}, expected at least 0.99")
if (rate(floor, "as_of") or 0) > 0.05:
    problems.append(f"{floor}: as_of = {rate(floor, 'as_of')}, expected it to fail")
if (rate(floor, "history_complete") or 0) > 0.5:
    problems.append(f"{floor}: history_complete = {rate(floor, 'history_complete')}, expected it to fail")
if (rate("verbatim", "over_retention") or 0) > 0:
    problems.append("verbatim keeps every turn, so one-offs must be over-retained")
if (rate("verbatim", "current_held", "no_memory") or 0) > 0:
    problems.append("no_memory mode holds something")
metrics = {r["metric"] for r in answers}
for metric in ["recall_accuracy", "update_fidelity", "temporal_accuracy", "constraint_consistency", "dedup_accuracy",
               "lifecycle_accuracy", "authority_integrity", "abstention_precision", "abstention_recall",
               "hallucination_rate"]:
    if metric not in metrics:
        problems.append(f"answer metric {metric} never reported")
for r in answers:
    if r["rate"] and not 0 <= float(r["rate"]) <= 1:
        problems.append(f"rate out of range: {r}")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"{len(checks)} check rows, {len(answers)} answer rows: every check and metric reported")
PY
echo "writ suite: OK"
