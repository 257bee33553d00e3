#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The published benchmarks through the real binary: a LoCoMo-shaped file (tests/fixtures/locomo)
# imported with `datasets import --from locomo`, valid, run offline with verbatim: the report shows
# memfail's stages per LoCoMo category and the "Benchmark metric" table says it needs an answer
# model; run again with tools/fake-llm's extractive stand-in as the answer model: the token-F1 table
# has numbers for every category (text, CSV and JSON). A LongMemEval-shaped file is imported and run
# offline too, its stages reported per question type.
# Usage: locomo_offline.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
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

# Import: every question kept, every oddity noted, the file valid.
"$memfail" datasets import --from locomo "$fixtures/locomo/locomo10-fixture.json" -o "$work/loc" > "$work/import.txt" 2>&1 ||
    fail "import: $(tail -5 "$work/import.txt")"
grep -q "imported 2 scenario(s), 19 probe(s)" "$work/import.txt" || fail "import summary: $(grep imported "$work/import.txt")"
grep -q "read as D2:1, D1:4" "$work/import.txt" || fail "no note on the evidence string holding two ids"
grep -q '"notes"' "$work/loc/manifest.json" || fail "the manifest does not keep the notes"
"$memfail" datasets validate "$work/loc/locomo.jsonl" > "$work/validate.txt" 2>&1 || fail "validate: $(head -5 "$work/validate.txt")"
grep -Eq '(^|[^0-9])0 violation' "$work/validate.txt" || fail "violations: $(head -5 "$work/validate.txt")"

# Offline: stages per category; the benchmark's metric needs an answer model.
"$memfail" run --system verbatim --datasets "$work/loc/locomo.jsonl" --k 1,5 --out "$work/offline.db" -q > "$work/run.txt" 2>&1 ||
    fail "verbatim offline: $(tail -5 "$work/run.txt")"
"$memfail" report "$work/offline.db" > "$work/report.txt" 2>&1 || fail "report: $(tail -3 "$work/report.txt")"
for label in "1 multi-hop" "2 temporal" "3 open-domain" "4 single-hop" "5 adversarial"; do
    grep -Eq "locomo +5 +category +$label " "$work/report.txt" ||
        fail "no slice row for category '$label' at k=5: $(grep -A14 '^Slices, run' "$work/report.txt")"
done
grep -q "^Benchmark metric" "$work/report.txt" || fail "no Benchmark metric table"
grep -Eq "locomo +5 +all .*needs an answer model" "$work/report.txt" ||
    fail "offline, the metric should need an answer model: $(grep -A10 '^Benchmark metric' "$work/report.txt")"

# LongMemEval: imported, valid, stages per question type.
"$memfail" datasets import --from longmemeval "$fixtures/longmemeval/longmemeval-fixture.json" -o "$work/lme" \
    > "$work/import-lme.txt" 2>&1 || fail "import longmemeval: $(tail -5 "$work/import-lme.txt")"
"$memfail" datasets validate "$work/lme/longmemeval.jsonl" > "$work/validate-lme.txt" 2>&1 ||
    fail "validate longmemeval: $(head -5 "$work/validate-lme.txt")"
"$memfail" run --system verbatim --datasets "$work/lme/longmemeval.jsonl" --k 3 --out "$work/lme.db" -q \
    > "$work/run-lme.txt" 2>&1 || fail "verbatim on longmemeval: $(tail -5 "$work/run-lme.txt")"
"$memfail" report "$work/lme.db" > "$work/report-lme.txt" 2>&1 || fail "report longmemeval"
for type in knowledge-update multi-session single-session-user temporal-reasoning; do
    grep -Eq "longmemeval +3 +question type +$type " "$work/report-lme.txt" ||
        fail "no slice row for question type $type: $(grep -A10 '^Slices, run' "$work/report-lme.txt")"
done

# With an answer model (the extractive stand-in): token F1 per category has numbers.
export MEMFAIL_LOCOMO_KEY="sk-locomo-5a4b3c2d1e"
"$fake_llm" --extractive --api-key-env MEMFAIL_LOCOMO_KEY --port-file "$work/port" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
base="http://127.0.0.1:$(cat "$work/port")/v1"
"$memfail" run --system verbatim --datasets "$work/loc/locomo.jsonl" --k 5 --out "$work/answered.db" -q \
    --base-url "$base" --api-key-env MEMFAIL_LOCOMO_KEY --answer-model stand-in \
    > "$work/run-answered.txt" 2>&1 || fail "verbatim with the stand-in: $(tail -5 "$work/run-answered.txt")"
"$memfail" report "$work/answered.db" > "$work/answered.txt" 2>&1 || fail "report (answered)"
grep -q "needs an answer model" "$work/answered.txt" && fail "the answered run still needs an answer model"
"$memfail" report "$work/answered.db" --format csv --table benchmark -o "$work/benchmark.csv" ||
    fail "report --format csv --table benchmark failed"
"$memfail" report "$work/answered.db" --format json -o "$work/answered.json" || fail "report --format json failed"
python3 - "$work/benchmark.csv" "$work/answered.json" <<'PY' || fail "the benchmark metric (above)"
import csv, json, sys
problems = []
rows = list(csv.DictReader(open(sys.argv[1])))
slices = {r["slice"]: r for r in rows if r["dataset"] == "locomo"}
for s in ["1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop", "5 adversarial", "all"]:
    r = slices.get(s)
    if r is None:
        problems.append(f"no CSV row for {s}: {rows}")
        continue
    try:
        v = float(r["score"])
        if not 0 <= v <= 1:
            problems.append(f"{s}: score {v} outside [0, 1]")
    except ValueError:
        problems.append(f"{s}: score {r['score']!r} is not a number")
    if r["metric"] != "token F1":
        problems.append(f"{s}: metric {r['metric']}")
if slices.get("all") and int(slices["all"]["scored"]) != 18:
    problems.append(f"all: {slices['all']['scored']} scored, expected 18 (every question of categories 1-5)")
doc = json.load(open(sys.argv[2]))
cells = [c for run in doc.get("runs", []) for c in run.get("benchmark", [])]
if not any(c["slice"] == "all" and isinstance(c["score"], float) for c in cells):
    problems.append(f"the JSON export has no scored 'all' cell: {cells[:3]}")
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
# LongMemEval with the stand-in: the accuracy is over every answered question, as the authors score
# it; a question whose memory failed first keeps its stage and no answer verdict, and carries a
# non-decisive `benchmark` check that only the Benchmark metric table reads when the answer rules
# can decide it. Without a judge the rules decide only what they can prove, so a slice with an
# undecided answer shows no score.
"$memfail" run --system verbatim --datasets "$work/lme/longmemeval.jsonl" --k 1 --out "$work/lme-answered.db" -q \
    --base-url "$base" --api-key-env MEMFAIL_LOCOMO_KEY --answer-model stand-in \
    > "$work/run-lme-answered.txt" 2>&1 || fail "longmemeval with the stand-in: $(tail -5 "$work/run-lme-answered.txt")"
"$memfail" report "$work/lme-answered.db" --format csv --table benchmark -o "$work/lme-benchmark.csv" ||
    fail "report --table benchmark (longmemeval)"
python3 - "$work/lme-answered.db" "$work/lme-benchmark.csv" <<'PY' || fail "LongMemEval's accuracy over every question (above)"
import csv, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
problems = []
probes = db.execute("SELECT COUNT(*) FROM probe_results WHERE dataset = 'longmemeval'").fetchone()[0]
failed = db.execute("SELECT COUNT(*) FROM probe_results WHERE dataset = 'longmemeval' "
                    "AND stage IN ('not_stored', 'summary_error', 'not_retrieved')").fetchone()[0]
verdicts = db.execute("SELECT COUNT(*) FROM probe_results p JOIN stage_checks c ON c.run_id = p.run_id "
                      "AND c.scenario_id = p.scenario_id AND c.probe_id = p.probe_id AND c.k = p.k "
                      "AND c.stage = 'benchmark' AND c.decisive = 0 "
                      "WHERE p.dataset = 'longmemeval' AND p.answer_correct IS NULL "
                      "AND p.stage IN ('not_stored', 'summary_error', 'not_retrieved')").fetchone()[0]
decided = db.execute("SELECT COUNT(*) FROM probe_results WHERE dataset = 'longmemeval' "
                     "AND answer_correct IS NOT NULL").fetchone()[0]
if failed == 0:
    problems.append("no question failed on the memory side at k=1: the check below proves nothing")
if verdicts > failed:
    problems.append(f"{failed} questions failed on the memory side, {verdicts} benchmark verdicts")
rows = {r["slice"]: r for r in csv.DictReader(open(sys.argv[2])) if r["dataset"] == "longmemeval"}
overall = rows.get("overall")
if overall is None:
    problems.append(f"no overall row: {list(rows)}")
else:
    if int(overall["answered"]) != probes:
        problems.append(f"overall: {overall['answered']} answered, expected {probes}")
    if int(overall["scored"]) != decided + verdicts:
        problems.append(f"overall: {overall['scored']} scored, expected {decided} decided answers + {verdicts} verdicts")
    if int(overall["scored"]) == 0:
        problems.append("overall: nothing scored; the rules decide at least the answers that quote the reference")
for name, r in rows.items():
    partial = int(r["scored"]) < int(r["answered"])
    if partial != (r["score"] == ""):
        problems.append(f"{name}: {r['scored']} of {r['answered']} scored, score {r['score']!r} "
                        "(a score only where every answer is scored)")
if not any(r["score"] == "" for r in rows.values()):
    problems.append("every slice scored: the check on partial slices above proves nothing")
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
echo "locomo_offline: ok"
