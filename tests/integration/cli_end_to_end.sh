#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Drives the real memfail binary: generate, validate (clean and corrupted), import, run, resume,
# report, and the errors a user sees for bad input. Usage: cli_end_to_end.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --help works on every command.
for cmd in "" "datasets" "datasets generate" "datasets validate" "datasets show" "datasets import" "run" "report" "serve" "conformance" "ls" \
           "ls systems" "ls datasets" "ls runs"; do
  # shellcheck disable=SC2086
  "$memfail" $cmd --help > "$work/help.txt" || fail "--help failed for '$cmd'"
  grep -q "Usage" "$work/help.txt" || fail "no usage for '$cmd'"
done

# Generation is deterministic and validates clean.
"$memfail" datasets generate --out "$work/a" > /dev/null 2>&1
"$memfail" datasets generate --out "$work/b" conditional_facts_easy,long_hop > /dev/null 2>&1
cmp -s "$work/a/long_hop.jsonl" "$work/b/long_hop.jsonl" || fail "same seed gave different long_hop files"
test -f "$work/a/manifest.json" || fail "no manifest"
"$memfail" datasets validate "$work"/a/*.jsonl > "$work/validate.txt" 2>&1 || { cat "$work/validate.txt"; fail "generated data has violations"; }

# A corrupted file is rejected with its line number and field; nothing else is touched.
cat "$work/a/coexisting_facts.jsonl" "$work/a/long_hop.jsonl" > "$work/two.jsonl"
python3 - "$work/two.jsonl" <<'PY'
import json, sys
path = sys.argv[1]
lines = open(path).read().splitlines()
s = json.loads(lines[1])
s["probes"][3]["correct_choice"] = "Z"
s["probes"][5]["evidence"][0]["message_ids"] = ["msg-9999-9"]
lines[1] = json.dumps(s)
open(path, "w").write("\n".join(lines) + "\n")
PY
set +e
"$memfail" datasets validate "$work/two.jsonl" > "$work/bad.txt" 2>&1
code=$?
set -e
[ $code -eq 1 ] || fail "validate of a corrupted file exited $code, expected 1"
grep -q "two.jsonl:2: probes\[3\].correct_choice" "$work/bad.txt" || { cat "$work/bad.txt"; fail "no line/field for correct_choice"; }
grep -q "two.jsonl:2: probes\[5\].evidence\[0\].message_ids\[0\]" "$work/bad.txt" || { cat "$work/bad.txt"; fail "no line/field for message id"; }

# show prints a probe with its evidence and the messages that state it.
"$memfail" datasets show "$work/a/long_hop.jsonl" --probe lhp-002 > "$work/show.txt"
grep -q "^\[lhp-002\] mcq" "$work/show.txt" && grep -q "<- correct" "$work/show.txt" && grep -q "key detail anchor_1" "$work/show.txt" \
  || { cat "$work/show.txt"; fail "show output"; }
set +e
"$memfail" datasets show long_hop --probe nope > /dev/null 2>&1
code=$?
set -e
[ $code -eq 2 ] || fail "show of an unknown probe exited $code"

# Import the CSV fixtures.
"$memfail" datasets import --from memfail-csv "$fixtures/memfail-csv" --out "$work/imported" > "$work/import.txt" 2>&1 || { cat "$work/import.txt"; fail "import failed"; }
for ds in conditional_facts_easy conditional_facts_hard coexisting_facts persona_retrieval long_hop; do
  test -s "$work/imported/$ds.jsonl" || fail "import wrote no $ds"
done
# The release folder as released: its file names, a raw copy and generation records beside them.
"$memfail" datasets import --from memfail-csv "$fixtures/memfail-csv-release" --out "$work/release" > "$work/release.txt" 2>&1 || { cat "$work/release.txt"; fail "release import failed"; }
for ds in conditional_facts_easy conditional_facts_hard coexisting_facts persona_retrieval long_hop; do
  test -s "$work/release/$ds.jsonl" || fail "release import wrote no $ds"
done
grep -q "note: .*conditional_facts_dataset_raw.csv: the release's raw copy" "$work/release.txt" || { cat "$work/release.txt"; fail "the raw copy was not noted"; }
grep -q "fact(s) with incomplete key details" "$work/release.txt" || { cat "$work/release.txt"; fail "incomplete facts not counted"; }
# Validation reports the fixture's real departures (it is not 100 rows) and exits 1, never 2.
set +e
"$memfail" datasets validate "$work"/release/*.jsonl > "$work/release-validate.txt" 2>&1
code=$?
set -e
[ $code -eq 1 ] || { cat "$work/release-validate.txt"; fail "validate of the imported release exited $code"; }
grep -q "conditional connective\|second conditional\|shares the name" "$work/release-validate.txt" && { cat "$work/release-validate.txt"; fail "validate reports a false positive"; }

# A run, its report, and a run on imported data.
"$memfail" run --system verbatim --datasets long_hop,coexisting_facts --data-dir "$work/a" --k 1,5 --out "$work/r.db" -q > "$work/run.txt"
grep -q "finished" "$work/run.txt" || fail "run did not finish: $(cat "$work/run.txt")"
"$memfail" report "$work/r.db" > "$work/report.txt"
grep -q "long_hop" "$work/report.txt" && grep -q "coexisting_facts" "$work/report.txt" || { cat "$work/report.txt"; fail "report misses datasets"; }
"$memfail" report "$work/r.db" --format json | python3 -c 'import json,sys; doc=json.load(sys.stdin); assert len(doc["runs"])==1 and len(doc["runs"][0]["results"])==4, doc'
# Samples: one line per probe x k (2 datasets x their probes x 2 ks), written atomically to a file.
"$memfail" report "$work/r.db" --format jsonl --output "$work/samples.jsonl"
probes=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM probe_results").fetchone()[0])' "$work/r.db")
[ "$(wc -l < "$work/samples.jsonl")" -eq "$probes" ] || fail "samples.jsonl has $(wc -l < "$work/samples.jsonl") lines for $probes probe x k"
python3 -c 'import json,sys; [json.loads(l)["question"] for l in open(sys.argv[1])]' "$work/samples.jsonl" || fail "a sample line lacks its question"
ls "$work" | grep -q "samples.jsonl.tmp" && fail "a temporary file was left behind"
# The HTML report: written whole, self-contained.
"$memfail" report "$work/r.db" --html "$work/report.html" 2> "$work/html.txt"
grep -q "wrote $work/report.html" "$work/html.txt" || { cat "$work/html.txt"; fail "report --html did not say where it wrote"; }
grep -q "</html>" "$work/report.html" || fail "report.html is incomplete"
grep -Eq "(src|href)=\"https?:" "$work/report.html" && fail "report.html references the network"
# Two runs compared: the same system twice gives no supported difference.
"$memfail" run --system verbatim --datasets long_hop,coexisting_facts --data-dir "$work/a" --k 1,5 --out "$work/r2.db" -q > /dev/null
"$memfail" compare "$work/r.db" "$work/r2.db" > "$work/compare.txt" || { cat "$work/compare.txt"; fail "compare failed"; }
grep -q "long_hop" "$work/compare.txt" || { cat "$work/compare.txt"; fail "compare misses datasets"; }
"$memfail" report "$work/r.db" --format csv | head -1 | grep -q "^run,system,dataset,k" || fail "csv header"
"$memfail" run --system verbatim:chunk=sentence --datasets "$work/imported/persona_retrieval.jsonl" --k 3 --out "$work/r.db" -q > /dev/null

# Errors a user sees: exit 2 and a clear message, nothing written.
set +e
"$memfail" run --system verbatm --datasets long_hop --out "$work/typo.db" -q > /dev/null 2> "$work/err.txt"
code=$?
set -e
[ $code -eq 2 ] || fail "unknown system exit code $code"
grep -q "did you mean 'verbatim'" "$work/err.txt" || { cat "$work/err.txt"; fail "no hint for a typo"; }
set +e
"$memfail" run --datasets no_such_set --out "$work/x.db" -q 2> "$work/err2.txt"
code=$?
set -e
[ $code -eq 2 ] || fail "unknown dataset exit code $code"
test ! -e "$work/x.db" || fail "a failed run left a results file"
set +e
"$memfail" report "$work/missing.db" 2> /dev/null
code=$?
set -e
[ $code -eq 2 ] || fail "missing results file exit code $code"

echo "cli end-to-end: ok"
