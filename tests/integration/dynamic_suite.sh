#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dynamic (long-horizon profile) suite through the real binary: `datasets generate dynamic` and
# `datasets import --from dynamicmem` write files that validate; verbatim offline reports evidence
# recall and completeness per checkpoint and task; verbatim answered and judged by tools/fake-llm's
# extractive stand-in (test-taker, field judge, attribution judge, --grader both) scores items,
# labels failures and compares the rules' labels with the judge's; oracle retrieves every gold log.
# Usage: dynamic_suite.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
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

# Data: generated and imported, both valid.
"$memfail" datasets generate dynamic --users 2 --scale 0.02 --months 6 -o "$work/gen" > "$work/gen.txt" 2>&1 ||
    fail "generate: $(tail -3 "$work/gen.txt")"
data="$work/gen/dynamic.jsonl"
[ -s "$data" ] || fail "generate wrote no dynamic.jsonl: $(ls "$work/gen")"
"$memfail" datasets validate "$data" > "$work/validate.txt" 2>&1 || fail "generated file: $(head -5 "$work/validate.txt")"
grep -Eq '(^|[^0-9])0 violation' "$work/validate.txt" || fail "generated file has violations: $(head -5 "$work/validate.txt")"
"$memfail" datasets import --from dynamicmem "$fixtures/dynamicmem/release" -o "$work/imp" > "$work/imp.txt" 2>&1 ||
    fail "import: $(tail -3 "$work/imp.txt")"
ls "$work/imp"/*.jsonl > /dev/null 2>&1 || fail "import wrote no dataset: $(cat "$work/imp.txt")"
"$memfail" datasets validate "$work/imp"/*.jsonl > "$work/validate-imp.txt" 2>&1 ||
    fail "imported file: $(head -5 "$work/validate-imp.txt")"
grep -Eq '(^|[^0-9])0 violation' "$work/validate-imp.txt" ||
    fail "imported file has violations: $(head -5 "$work/validate-imp.txt")"
# A user written the way DynamicMem's own code writes one: imported, valid, and run per checkpoint.
"$memfail" datasets import --from dynamicmem "$fixtures/dynamicmem/schema" -o "$work/schema" > "$work/schema.txt" 2>&1 ||
    fail "import of the DynamicMem-schema user: $(tail -3 "$work/schema.txt")"
grep -q "imported 1 scenario(s), 12 probe(s)" "$work/schema.txt" || fail "schema user: $(grep imported "$work/schema.txt")"
"$memfail" datasets validate "$work/schema/dynamic.jsonl" > "$work/validate-schema.txt" 2>&1 ||
    fail "schema user: $(head -5 "$work/validate-schema.txt")"
"$memfail" run --system verbatim --datasets "$work/schema/dynamic.jsonl" --k 10 --out "$work/schema.db" -q > /dev/null 2>&1 ||
    fail "verbatim on the schema user"
"$memfail" report "$work/schema.db" > "$work/schema-report.txt" 2>&1 || fail "report of the schema user"
grep -Eq "cal_quarterly_002 +state_completion" "$work/schema-report.txt" ||
    fail "no profile row for the schema user's second checkpoint: $(head -12 "$work/schema-report.txt")"

# verbatim offline: the profile table, per checkpoint and task.
"$memfail" run --system verbatim --datasets "$data" --k 5,10 --out "$work/offline.db" -q > "$work/run.txt" 2>&1 ||
    fail "verbatim offline: $(tail -5 "$work/run.txt")"
"$memfail" report "$work/offline.db" > "$work/report.txt" 2>&1 || fail "report: $(tail -3 "$work/report.txt")"
grep -q "Profile tasks per checkpoint" "$work/report.txt" || fail "no 'Profile tasks per checkpoint' table in the report"
for checkpoint in C1 C2; do
    for task in state_completion personalized_service; do
        grep -Eq "[[:space:]|]$checkpoint[[:space:]|]+$task([[:space:]|]|$)" "$work/report.txt" ||
            fail "the profile table has no row for $checkpoint $task: $(grep -A12 'Profile tasks per checkpoint' "$work/report.txt")"
    done
done
"$memfail" report "$work/offline.db" --format csv --table profile -o "$work/offline.csv" ||
    fail "report --format csv --table profile failed"
head -1 "$work/offline.csv" | tr ',' '\n' | grep -qx recall || fail "profile CSV header lacks recall: $(head -1 "$work/offline.csv")"
head -1 "$work/offline.csv" | tr ',' '\n' | grep -qx complete || fail "profile CSV header lacks complete: $(head -1 "$work/offline.csv")"

# verbatim answered and judged by the extractive stand-in (one server, an API key required).
export MEMFAIL_DYNAMIC_KEY="sk-dynamic-3f2e1d0c9b8a"
"$fake_llm" --extractive --api-key-env MEMFAIL_DYNAMIC_KEY --port-file "$work/port" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
base="http://127.0.0.1:$(cat "$work/port")/v1"
"$memfail" run --system verbatim --datasets "$data" --k 5,10 --out "$work/judged.db" -q \
    --base-url "$base" --api-key-env MEMFAIL_DYNAMIC_KEY --answer-model stand-in --judge-model stand-in --grader both \
    > "$work/run-judged.txt" 2>&1 || fail "verbatim with the stand-in failed: $(tail -5 "$work/run-judged.txt")"
"$memfail" report "$work/judged.db" --format csv --table profile -o "$work/judged.csv" ||
    fail "report --format csv --table profile (judged) failed"
"$memfail" report "$work/judged.db" --format json -o "$work/judged.json" || fail "report --format json failed"
"$memfail" report "$work/judged.db" > "$work/judged.txt" 2>&1 || fail "report (judged): $(tail -3 "$work/judged.txt")"
python3 - "$work/judged.csv" "$work/judged.json" "$work/judged.db" <<'PY' || fail "the judged run's profile figures (above)"
import csv, json, sqlite3, sys
problems = []
rows = list(csv.DictReader(open(sys.argv[1])))
if not any(r.get("score", "") != "" for r in rows):
    problems.append(f"no profile CSV row has a score: {rows[:4]}")
doc = json.load(open(sys.argv[2]))
cells = [c for run in doc.get("runs", []) for c in run.get("profile", [])]
if not cells:
    problems.append("the JSON export has no profile cells")
labels = {l for c in cells for l, n in c.get("labels", {}).items() if n}
if len(labels) < 3:
    problems.append(f"profile cells carry {len(labels)} distinct labels, expected at least 3: {sorted(labels)}")
if not any(c.get("wrong_labels", {}).get("all_clear") for c in cells):
    problems.append("no profile cell has a wrong answer labelled all_clear")
db = sqlite3.connect(sys.argv[3])
errors = db.execute("SELECT COUNT(*), MIN(error) FROM probe_results WHERE stage = 'error'").fetchone()
if errors[0]:
    problems.append(f"{errors[0]} rows in error, e.g. {errors[1]}")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"{len(cells)} profile cells, labels {sorted(labels)}")
PY
grep -q "Rules and judge agreement" "$work/judged.txt" || fail "no 'Rules and judge agreement' table in the judged report"
sed -n '/Rules and judge agreement/,/^$/p' "$work/judged.txt" | grep -q "attribution:" ||
    fail "the agreement table lists no attribution: stage: $(sed -n '/Rules and judge agreement/,/^$/p' "$work/judged.txt")"

# oracle offline: every gold log retrieved, so State Completion is complete at every checkpoint.
"$memfail" run --system oracle --datasets "$data" --k 5,10 --out "$work/oracle.db" -q > "$work/run-oracle.txt" 2>&1 ||
    fail "oracle offline: $(tail -5 "$work/run-oracle.txt")"
"$memfail" report "$work/oracle.db" --format csv --table profile -o "$work/oracle.csv" || fail "oracle profile CSV failed"
python3 - "$work/oracle.csv" "$work/oracle.db" <<'PY' || fail "oracle's State Completion is not complete everywhere (above)"
import csv, sqlite3, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["task"] == "state_completion"]
checkpoints = {r["checkpoint"] for r in rows}
bad = [r for r in rows if r["complete"] == "" or float(r["complete"]) != 1.0]
if not {"C1", "C2"} <= checkpoints or bad:
    print(f"checkpoints {sorted(checkpoints)}; not complete: {bad}", file=sys.stderr)
    db = sqlite3.connect(sys.argv[2])
    for row in db.execute("SELECT k, probe_id, label, reason FROM profile_results WHERE task = 'state_completion' "
                          "AND label != 'all_clear' ORDER BY k, probe_id LIMIT 10"):
        print("  k=%s %s: %s (%s)" % row, file=sys.stderr)
    sys.exit(1)
PY
echo "dynamic suite: OK"
