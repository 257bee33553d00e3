#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HaluMem through the real binary: HaluMem-shaped files (tests/fixtures/halumem, the schema the
# authors' scripts write) imported with `datasets import --from halumem`, valid, run offline with
# verbatim: the report slices memfail's stages by HaluMem's question types, its Memory Boundary
# questions are to be declined, and no probe whose evidence is only placed in a session is ever a
# success without a judge. A file with a broken line imports the other users, says so, and exits 2.
# HaluMem's operation figures: offline every item the rules cannot decide is counted undecided and
# no figure is shown for it; with a judge (tools/fake-llm, scripted) the figures follow its verdicts
# exactly, in the text, CSV and JSON reports.
# Usage: halumem_offline.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fixtures=$2
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$memfail" datasets import --from halumem "$fixtures/halumem/halumem-medium-fixture.jsonl" -o "$work/med" > "$work/import.txt" 2>&1 ||
    fail "import: $(tail -5 "$work/import.txt")"
grep -q "imported 2 scenario(s), 11 probe(s)" "$work/import.txt" || fail "import summary: $(grep imported "$work/import.txt")"
grep -q "no memory point of this session or an earlier one" "$work/import.txt" || fail "the unresolved evidence is not noted"
"$memfail" datasets import --from halumem "$fixtures/halumem/halumem-long-fixture.jsonl" -o "$work/long" > "$work/import-long.txt" 2>&1 ||
    fail "import long: $(tail -5 "$work/import-long.txt")"
"$memfail" datasets validate "$work/med/halumem.jsonl" "$work/long/halumem.jsonl" > "$work/validate.txt" 2>&1 ||
    fail "validate: $(head -5 "$work/validate.txt")"
[ "$(grep -c ', 0 violation(s)' "$work/validate.txt")" = 2 ] || fail "violations: $(cat "$work/validate.txt")"

"$memfail" run --system verbatim --datasets "$work/med/halumem.jsonl" --k 1,20 --out "$work/r.db" -q > "$work/run.txt" 2>&1 ||
    fail "verbatim offline: $(tail -5 "$work/run.txt")"
"$memfail" report "$work/r.db" > "$work/report.txt" 2>&1 || fail "report: $(tail -3 "$work/report.txt")"
for type in "Basic Fact Recall" "Dynamic Update" "Multi-hop Inference" "Memory Conflict" "Generalization & Application"; do
    grep -Eq "halumem +20 +question type +$type " "$work/report.txt" ||
        fail "no slice row for '$type' at k=20: $(grep -A14 '^Slices, run' "$work/report.txt")"
done
# At k=20: of the four probes whose facts are placed in one message, three are retrieved and one is
# not (its question shares no word with the message: lexical retrieval never ranks it); the four
# whose facts are placed only among their sessions' messages are the judge's (unverified), never
# a success; no probe is an error.
grep -Eq "^halumem +20 +8 +3 +37\.5 " "$work/report.txt" || fail "k=20 success row: $(grep -E '^halumem' "$work/report.txt")"
grep -Eq "^halumem +20 +8 +3 .* 0 +0 +4 +1 +0 +3 " "$work/report.txt" || fail "k=20 stages: $(grep -E '^halumem' "$work/report.txt")"

# A file with a broken line: the other users are imported and written, the import says what it
# skipped and exits 2.
{ head -1 "$fixtures/halumem/halumem-medium-fixture.jsonl"; echo '{"uuid": "broken", "sessions": ['; tail -1 "$fixtures/halumem/halumem-medium-fixture.jsonl"; } > "$work/broken.jsonl"
rc=0
"$memfail" datasets import --from halumem "$work/broken.jsonl" -o "$work/broken" > "$work/broken.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an import that skipped a user exited $rc, not 2: $(tail -3 "$work/broken.txt")"
grep -q "skipped 1 element(s)" "$work/broken.txt" || fail "the skipped user is not counted: $(cat "$work/broken.txt")"
grep -q "line 2: not imported" "$work/broken.txt" || fail "the skipped line is not named: $(cat "$work/broken.txt")"
[ "$(wc -l < "$work/broken/halumem.jsonl")" = 2 ] || fail "the importable users were not written"
grep -q '"elements_skipped": 1' "$work/broken/manifest.json" || fail "the manifest does not count the skipped user"

# HaluMem's operations offline: verbatim stores messages, never the memory points' own words, so
# every extraction, false-memory, accuracy and update item is undecided and no figure is shown.
"$memfail" report "$work/r.db" --format csv --table halumem -o "$work/ops.csv" || fail "report --table halumem"
python3 - "$work/ops.csv" <<'PY' || fail "offline operation figures (above)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1, rows
r = rows[0]
problems = []
# 19 real points (3 of them updates, probed in their place), 5 interference points (1 with a real
# point's text, excluded).
if (r["recall_items"], r["recall_undecided"]) != ("16", "16"): problems.append(f"recall items {r}")
if (r["fmr_items"], r["fmr_undecided"], r["fmr_excluded"]) != ("4", "4", "1"): problems.append(f"fmr items {r}")
if (r["update_items"], r["update_undecided"]) != ("3", "3"): problems.append(f"update items {r}")
for k in ("recall", "weighted_recall", "fmr", "accuracy", "target_precision", "f1", "update_correct"):
    if r[k] != "": problems.append(f"{k} = {r[k]!r} with nothing decided")
if problems: sys.exit("\n".join(problems))
PY

# With a judge that finds every point covered, every memory accurate and on a real point's slot and
# every update correct: recall 100%, FMR 0% (the false memories are "covered" too), accuracy and
# target precision 100%, F1 100%, updates all correct.
# The QA probes' own judging (storage, summary, retrieval, answers) as examples/fake-llm/judge-passes.json.
python3 - "$fixtures/../../examples/fake-llm/judge-passes.json" "$work/judge.json" <<'PY'
import json, sys
script = json.load(open(sys.argv[1]))
script["rules"] = [
    {"match": {"schema": "memfail_judge_halumem_integrity"}, "json": {"reasoning": "stated", "score": "2"}},
    {"match": {"schema": "memfail_judge_halumem_accuracy"},
     "json": {"reason": "supported", "accuracy_score": "2", "is_included_in_golden_memories": "true"}},
    {"match": {"schema": "memfail_judge_halumem_update"}, "json": {"reason": "replaced", "evaluation_result": "Correct"}},
] + script["rules"]
json.dump(script, open(sys.argv[2], "w"))
PY
"$fake_llm" --script "$work/judge.json" --port-file "$work/port" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
export OPENAI_API_KEY=sk-fake-halumem
"$memfail" run --system verbatim --datasets "$work/med/halumem.jsonl" --k 20 --out "$work/judged.db" -q \
    --base-url "http://127.0.0.1:$(cat "$work/port")/v1" --judge-model judge > "$work/run-judged.txt" 2>&1 ||
    fail "verbatim with a judge: $(tail -5 "$work/run-judged.txt")"
"$memfail" report "$work/judged.db" --format csv --table halumem -o "$work/judged.csv" || fail "report (judged)"
"$memfail" report "$work/judged.db" --format json -o "$work/judged.json" || fail "report --format json (judged)"
"$memfail" report "$work/judged.db" > "$work/judged.txt" 2>&1 || fail "report text (judged)"
grep -q "^HaluMem operations" "$work/judged.txt" || fail "the text report has no HaluMem operations table"
python3 - "$work/judged.csv" "$work/judged.json" <<'PY' || fail "judged operation figures (above)"
import csv, json, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
want = {"recall": "1", "weighted_recall": "1", "fmr": "0", "accuracy": "1", "target_precision": "1", "f1": "1",
        "update_correct": "1", "update_omission": "0", "recall_undecided": "0", "fmr_undecided": "0",
        "accuracy_undecided": "0", "target_unknown": "0", "update_undecided": "0", "errors": "0"}
problems = [f"{k}: {r[k]!r}, want {v!r}" for k, v in want.items() if r[k] != v]
ops = json.load(open(sys.argv[2]))["runs"][0]["halumem"]
if ops["recall"]["value"] != 1 or ops["updates"]["counts"] != {"correct": 3}: problems.append(f"json: {ops}")
if problems: sys.exit("\n".join(problems))
PY
echo "halumem offline: ok"
